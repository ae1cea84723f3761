// What a batch in commit does to the cached state: its takes count as pending while it commits, and after COMMIT the
// counters, per-customer uses and sessions the statement returned replace the cached ones. Each touched entry counts
// the counters stored (`commits`), so that a stack's hold can tell whether its own use may be added to the cached
// counters (stack-holds.ts) or the voucher must be read again.
import type { Reserved } from '../../checkout/redemption.rules.js';
import type { UsageKey } from './hot-path.sql.js';
import type { SessionChanges } from './session-reservations.js';
import type { HotVoucher } from './voucher-state-cache.js';
import type { Taken } from './write-planner.js';

/** What a committing batch takes, and the reservations it adds, count as taken for decisions made meanwhile. */
export function setPending(taken: Map<HotVoucher, Taken>, reserving: Map<HotVoucher, Reserved>, sign: 1 | -1): void {
  for (const [entry, t] of taken) {
    entry.pendingUses += sign * t.uses;
    entry.pendingBalance += sign * t.balance;
    for (const [customerId, n] of t.byCustomer) {
      entry.pendingByCustomer.set(customerId, (entry.pendingByCustomer.get(customerId) ?? 0) + sign * n);
    }
  }
  for (const [entry, r] of reserving) {
    entry.pendingUses += sign * r.uses;
    entry.pendingBalance += sign * r.balance;
  }
}

export function applyCommitted(
  touched: Set<HotVoucher>,
  vouchers: ReadonlyArray<{ id: string; redeemedCount: number; giftBalance: number | null }>,
  usage: ReadonlyArray<UsageKey & { uses: number }>,
  sessions: SessionChanges<HotVoucher>,
): void {
  sessions.apply();
  const byId = new Map(vouchers.map((v) => [v.id, v]));
  const usageByVoucher = new Map<string, Array<UsageKey & { uses: number }>>();
  for (const u of usage) usageByVoucher.set(u.voucherId, [...(usageByVoucher.get(u.voucherId) ?? []), u]);
  for (const entry of touched) {
    entry.commits += 1;
    const v = entry.snapshot;
    if (!v) continue;
    const after = byId.get(v.id);
    if (after) entry.snapshot = { ...v, redeemedCount: after.redeemedCount, giftBalance: after.giftBalance };
    for (const u of usageByVoucher.get(v.id) ?? []) entry.customerUses.set(u.customerId, u.uses);
  }
}
