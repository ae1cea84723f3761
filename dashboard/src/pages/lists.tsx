// Vouchers, customers, redemptions and webhooks: their lists, newest first, paged.
import { useCallback } from 'preact/hooks';
import { call } from '../api.js';
import { Badge, formatTime, PageHeader, PagedTable } from '../components.js';
import type { PageProps } from '../app.js';

const money = (amount: number | null | undefined, currency: string | null | undefined) =>
  amount === null || amount === undefined ? '—' : `${(amount / 100).toFixed(2)}${currency ? ' ' + currency : ''}`;

function Refused({ what }: { what: string }) {
  return <p class="note">Your role cannot see {what}.</p>;
}

export function VouchersPage({ can }: PageProps) {
  const load = useCallback((cursor: string | undefined) => call('vouchers.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <PageHeader title="Vouchers" />
      {can('vouchers:read') ? (
        <PagedTable
          label="Vouchers"
          load={load}
          empty="No vouchers yet."
          columns={[
            { label: 'Code', render: (v) => <code>{v.code}</code> },
            { label: 'Type', render: (v) => v.type },
            { label: 'Redeemed', render: (v) => `${v.redemption.redeemedCount}${v.redemption.limit === null ? '' : ' / ' + v.redemption.limit}` },
            { label: 'Status', render: (v) => (v.active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">Disabled</Badge>) },
            { label: 'Created', render: (v) => formatTime(v.createdAt), class: 'nowrap' },
          ]}
        />
      ) : (
        <Refused what="vouchers" />
      )}
    </section>
  );
}

export function CustomersPage({ can }: PageProps) {
  const load = useCallback((cursor: string | undefined) => call('customers.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <PageHeader title="Customers" />
      {can('customers:read') ? (
        <PagedTable
          label="Customers"
          load={load}
          empty="No customers yet. They appear when created or at their first redemption."
          columns={[
            { label: 'Name', render: (c) => c.name ?? '—' },
            { label: 'Email', render: (c) => c.email ?? '—' },
            { label: 'Source id', render: (c) => (c.sourceId ? <code>{c.sourceId}</code> : '—') },
            { label: 'Created', render: (c) => formatTime(c.createdAt), class: 'nowrap' },
          ]}
        />
      ) : (
        <Refused what="customers" />
      )}
    </section>
  );
}

export function RedemptionsPage({ can }: PageProps) {
  const load = useCallback((cursor: string | undefined) => call('redemptions.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <PageHeader title="Redemptions" />
      {can('redemptions:read') ? (
        <PagedTable
          label="Redemptions"
          load={load}
          empty="No redemptions yet."
          columns={[
            { label: 'Voucher', render: (r: any) => <code>{r.voucherCode}</code> },
            { label: 'Amount', render: (r: any) => money(r.amount, r.currency) },
            { label: 'Order', render: (r: any) => money(r.orderAmount, r.currency) },
            { label: 'Status', render: (r: any) => (r.rolledBackAt ? <Badge tone="bad">Rolled back</Badge> : <Badge tone="good">Redeemed</Badge>) },
            { label: 'When', render: (r: any) => formatTime(r.createdAt), class: 'nowrap' },
          ]}
        />
      ) : (
        <Refused what="redemptions" />
      )}
    </section>
  );
}

export function WebhooksPage({ can }: PageProps) {
  const load = useCallback((cursor: string | undefined) => call('webhooks.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <PageHeader title="Webhooks" />
      {can('webhooks:read') ? (
        <PagedTable
          label="Webhook endpoints"
          load={load}
          empty="No webhook endpoints yet."
          columns={[
            { label: 'URL', render: (w) => <code>{w.url}</code> },
            { label: 'Events', render: (w) => (w.events === '*' ? 'All events' : (w.events as string[]).join(', ')) },
            { label: 'Status', render: (w) => (w.active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">Inactive</Badge>) },
            { label: 'Created', render: (w) => formatTime(w.createdAt), class: 'nowrap' },
          ]}
        />
      ) : (
        <Refused what="webhooks" />
      )}
    </section>
  );
}
