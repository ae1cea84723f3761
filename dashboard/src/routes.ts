// The dashboard's pages, in navigation order, and the hash routes they live at.
export interface PageEntry {
  name: string;
  path: string;
}

export const PAGES: readonly PageEntry[] = [
  { name: 'Campaigns', path: 'campaigns' },
  { name: 'Vouchers', path: 'vouchers' },
  { name: 'Customers', path: 'customers' },
  { name: 'Orders', path: 'orders' },
  { name: 'Redemptions', path: 'redemptions' },
  { name: 'Loyalty', path: 'loyalty' },
  { name: 'Referrals', path: 'referrals' },
  { name: 'Webhooks', path: 'webhooks' },
  { name: 'Insights', path: 'insights' },
  { name: 'Audit log', path: 'audit-log' },
  { name: 'Settings', path: 'settings' },
];

/** `#/audit-log` → ['audit-log']; `#/accept-invitation/<token>` → ['accept-invitation', token]. */
export function routeOf(hash: string): string[] {
  return hash.replace(/^#\/?/, '').split('/').filter(Boolean);
}

export function go(path: string): void {
  location.hash = `#/${path}`;
}
