// Stack holds: one use (and the gift credits) of each voucher of a stack, held by the owning partition while the stack
// commits on the web thread. A hold never waits (yes or no at once); it ends when the stack confirms or gives up, or
// after 30 s. A confirmed hold becomes a use in the cached counters when nothing else stored them meanwhile (the
// stack's transaction added exactly that use); otherwise the voucher is read again before its next decision.
import type { CustomerUse, PartitionCall } from '../messages.js';
import { useContext, voucherKey, type Hold, type HotVoucher } from './voucher-state-cache.js';
import { storedBalance } from '../../checkout/redemption.rules.js';

const HOLD_TIMEOUT_MS = 30_000;

export class StackHolds {
  private readonly held = new Map<string, { holds: Hold[]; timer: NodeJS.Timeout }>();

  constructor(
    private readonly peek: (voucherKey: string) => HotVoucher | undefined,
    /** Whether a batch of the partition (loading, deciding or committing) is in flight on the voucher. */
    private readonly inBatch: (voucherKey: string) => boolean,
  ) {}

  get size(): number {
    return this.held.size;
  }

  /**
   * Holds the items if the state the stack decided on still holds (same settings versions, room left). An entry's own
   * session reservation is its own, and stays counted until the stack's commit deletes it (on the safe side meanwhile).
   */
  hold(call: Extract<PartitionCall, { type: 'hold' }>, entries: HotVoucher[], now: number): { ok: boolean } {
    const { items, customer } = call;
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      const v = entries[i]!.snapshot;
      if (!v || v.id !== item.voucherId || v.configVersion !== item.configVersion || (v.campaign?.version ?? null) !== item.campaignVersion) {
        return { ok: false };
      }
      const reserved = entries[i]!.sessions.reserved(now, item.session);
      const use = useContext(entries[i]!, customer.id, customer.given, undefined, reserved);
      if (v.redemptionLimit !== null && v.redeemedCount + use.heldUses + reserved.uses + 1 > v.redemptionLimit) return { ok: false };
      if (v.perCustomerLimit !== null && use.customerUses + 1 > v.perCustomerLimit) return { ok: false };
      if (item.balance > 0 && storedBalance(v) - use.heldBalance - reserved.balance < item.balance) return { ok: false };
    }
    const holds = items.map((item, i) => take(entries[i]!, voucherKey(call.workspaceId, item.code), item, customer));
    const timer = setTimeout(() => this.release(call.holdId, false), HOLD_TIMEOUT_MS);
    timer.unref();
    this.held.set(call.holdId, { holds, timer });
    return { ok: true };
  }

  release(holdId: string, applied: boolean): void {
    const held = this.held.get(holdId);
    if (!held) return;
    clearTimeout(held.timer);
    this.held.delete(holdId);
    for (const hold of held.holds) {
      const entry = hold.entry;
      entry.heldUses -= hold.uses;
      entry.heldBalance -= hold.balance;
      if (hold.customerId) decrement(entry.heldByCustomer, hold.customerId);
      if (!applied) continue;
      if (this.peek(hold.voucherKey) === entry && !this.inBatch(hold.voucherKey) && turnedIntoUse(hold)) continue;
      // The counters were stored again meanwhile (a load, a batch), so whether they count this stack's use is unknown;
      // or the stack consumed a session: read the voucher again before the next decision.
      entry.stale = true;
      const current = this.peek(hold.voucherKey);
      if (current) current.stale = true;
    }
  }
}

/**
 * The stack's transaction added one use (and took the held credits) to the voucher row: when no load or batch of this
 * partition stored the entry's counters since the hold (and none is in flight on it: the caller checks), the cached
 * counters plus this use are the row's (other stacks' uses are added the same way, each by its own release).
 */
function turnedIntoUse(hold: Hold): boolean {
  const { entry } = hold;
  const v = entry.snapshot;
  if (!v || entry.stale || entry.commits !== hold.commits || hold.session) return false;
  if (hold.balance > 0 && (v.type !== 'GIFT_CARD' || v.giftBalance === null)) return false;
  entry.snapshot = { ...v, redeemedCount: v.redeemedCount + hold.uses, giftBalance: hold.balance > 0 ? v.giftBalance! - hold.balance : v.giftBalance };
  const customerUses = hold.customerId === null ? undefined : entry.customerUses.get(hold.customerId);
  if (customerUses !== undefined) entry.customerUses.set(hold.customerId!, customerUses + hold.uses);
  return true;
}

function take(entry: HotVoucher, key: string, item: { balance: number; session?: string | undefined }, customer: CustomerUse): Hold {
  entry.heldUses += 1;
  entry.heldBalance += item.balance;
  if (customer.id) entry.heldByCustomer.set(customer.id, (entry.heldByCustomer.get(customer.id) ?? 0) + 1);
  return { voucherKey: key, entry, commits: entry.commits, uses: 1, balance: item.balance, customerId: customer.id, session: item.session !== undefined };
}

function decrement(map: Map<string, number>, key: string): void {
  const left = (map.get(key) ?? 1) - 1;
  if (left > 0) map.set(key, left);
  else map.delete(key);
}
