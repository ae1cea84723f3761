// Stack holds: one use (and the gift credits) of each voucher of a stack, held by the owning partition while the stack
// commits on the web thread. A hold never waits (yes or no at once); it ends when the stack confirms or gives up, or
// after 30 s.
import type { CustomerUse, PartitionCall } from '../messages.js';
import { useContext, voucherKey, type Hold, type HotVoucher } from './voucher-state-cache.js';
import { storedBalance } from '../../domains/redemptions/redemption.rules.js';

const HOLD_TIMEOUT_MS = 30_000;

export class StackHolds {
  private readonly held = new Map<string, { holds: Hold[]; timer: NodeJS.Timeout }>();

  constructor(private readonly peek: (voucherKey: string) => HotVoucher | undefined) {}

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
    const holds = items.map((item, i) => take(entries[i]!, voucherKey(call.workspaceId, item.code), item.balance, customer));
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
      const entry = this.peek(hold.voucherKey);
      if (!entry) continue;
      entry.heldUses -= hold.uses;
      entry.heldBalance -= hold.balance;
      if (hold.customerId) decrement(entry.heldByCustomer, hold.customerId);
      // The stack's transaction changed the counters (and consumed sessions): read them again before the next decision.
      if (applied) entry.stale = true;
    }
  }
}

function take(entry: HotVoucher, key: string, balance: number, customer: CustomerUse): Hold {
  entry.heldUses += 1;
  entry.heldBalance += balance;
  if (customer.id) entry.heldByCustomer.set(customer.id, (entry.heldByCustomer.get(customer.id) ?? 0) + 1);
  return { voucherKey: key, uses: 1, balance, customerId: customer.id };
}

function decrement(map: Map<string, number>, key: string): void {
  const left = (map.get(key) ?? 1) - 1;
  if (left > 0) map.set(key, left);
  else map.delete(key);
}
