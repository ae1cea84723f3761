// A confirmed stack hold becomes a use in the partition's cached counters only when nothing else stored them between
// the hold and its release; otherwise the voucher is read again. Decided on real cache entries and the real commit
// bookkeeping (committed-state.ts), in memory: the database side is raced in test/redemptions/races.test.ts.
import { describe, expect, it } from 'vitest';
import type { VoucherSnapshot } from '../../src/checkout/redemption.rules.js';
import { applyCommitted } from '../../src/engine/partition/committed-state.js';
import { SessionChanges } from '../../src/engine/partition/session-reservations.js';
import { StackHolds } from '../../src/engine/partition/stack-holds.js';
import { VoucherStateCache, voucherKey, type HotVoucher } from '../../src/engine/partition/voucher-state-cache.js';

const WS = '00000000-0000-4000-8000-000000000001';
const customer = { id: '00000000-0000-4000-8000-0000000000c1', given: true, facts: undefined };

function snapshot(code: string, extra: Partial<VoucherSnapshot> = {}): VoucherSnapshot {
  return {
    id: `00000000-0000-4000-8000-${code.padStart(12, '0')}`,
    workspaceId: WS,
    code,
    type: 'DISCOUNT',
    campaignId: null,
    discount: { type: 'AMOUNT', amountOff: 100 },
    currency: 'EUR',
    active: true,
    startDate: null,
    expirationDate: null,
    redemptionLimit: 10,
    redeemedCount: 4,
    perCustomerLimit: null,
    priority: null,
    exclusive: null,
    maxDiscount: null,
    customerId: null,
    giftBalance: null,
    points: null,
    referral: null,
    validationRuleIds: [],
    configVersion: 1,
    campaign: null,
    kind: 'CODE',
    name: null,
    schedule: null,
    timeZone: 'UTC',
    rules: [],
    ...extra,
  } as VoucherSnapshot;
}

function setup(...snapshots: VoucherSnapshot[]) {
  const cache = new VoucherStateCache(100, 60_000);
  const entries = snapshots.map((s) => cache.store(voucherKey(WS, s.code), s, Date.now()));
  // The keys of the vouchers a batch of the partition is working on (partition-runtime.ts keeps them as `busy`).
  const inBatch = new Set<string>();
  const holds = new StackHolds((key) => cache.peek(key), (key) => inBatch.has(key));
  let n = 0;
  const hold = (items: Array<{ entry: HotVoucher; balance?: number; session?: string }>) => {
    const holdId = `hold-${++n}`;
    const answer = holds.hold(
      {
        type: 'hold',
        workspaceId: WS,
        holdId,
        customer,
        items: items.map(({ entry, balance, session }) => ({
          code: entry.snapshot!.code,
          voucherId: entry.snapshot!.id,
          configVersion: entry.snapshot!.configVersion,
          campaignVersion: null,
          balance: balance ?? 0,
          session,
        })),
      },
      items.map((i) => i.entry),
      Date.now(),
    );
    expect(answer.ok).toBe(true);
    return holdId;
  };
  return { cache, entries, holds, hold, inBatch };
}

describe('stack holds turned into uses', () => {
  it('adds each confirmed hold to the cached counters, however many stacks overlapped, and keeps the entry fresh', () => {
    const { cache, entries, holds, hold } = setup(snapshot('A'), snapshot('G', { type: 'GIFT_CARD', redemptionLimit: null, redeemedCount: 0, giftBalance: 5_000 }));
    const [a, g] = entries as [HotVoucher, HotVoucher];
    a.customerUses.set(customer.id, 2);
    const first = hold([{ entry: a }, { entry: g, balance: 300 }]);
    const second = hold([{ entry: a }, { entry: g, balance: 200 }]);
    expect(a.heldUses).toBe(2);
    holds.release(first, true);
    holds.release(second, true);
    expect(a.snapshot!.redeemedCount).toBe(6);
    expect(a.customerUses.get(customer.id)).toBe(4);
    expect(g.snapshot!.giftBalance).toBe(4_500);
    expect([a.heldUses, a.heldBalance, g.heldUses, g.heldBalance]).toEqual([0, 0, 0, 0]);
    expect(cache.fresh(voucherKey(WS, 'A'), Date.now())).toBe(a);
    expect(cache.fresh(voucherKey(WS, 'G'), Date.now())).toBe(g);
  });

  it('a hold given up changes no counter', () => {
    const { cache, entries, holds, hold } = setup(snapshot('A'));
    const a = entries[0]!;
    holds.release(hold([{ entry: a }]), false);
    expect(a.snapshot!.redeemedCount).toBe(4);
    expect(a.heldUses).toBe(0);
    expect(cache.fresh(voucherKey(WS, 'A'), Date.now())).toBe(a);
  });

  it('reads the voucher again when a batch stored its counters, or is in flight on it, or it was reloaded, since the hold', () => {
    const { cache, entries, holds, hold, inBatch } = setup(snapshot('A'), snapshot('B'), snapshot('C'));
    const [a, b, c] = entries as [HotVoucher, HotVoucher, HotVoucher];
    const held = hold([{ entry: a }, { entry: b }, { entry: c }]);
    // A: a batch of this partition committed and stored the row's counters (which may or may not count the stack).
    applyCommitted(new Set([a]), [{ id: a.snapshot!.id, redeemedCount: 5, giftBalance: null }], [], new SessionChanges());
    // B: a batch is working on it right now. C: the voucher was read again from the database.
    inBatch.add(voucherKey(WS, 'B'));
    cache.store(voucherKey(WS, 'C'), snapshot('C', { redeemedCount: 5 }), Date.now());
    holds.release(held, true);
    expect([a.snapshot!.redeemedCount, b.snapshot!.redeemedCount, c.snapshot!.redeemedCount]).toEqual([5, 4, 5]);
    for (const code of ['A', 'B', 'C']) expect(cache.fresh(voucherKey(WS, code), Date.now())).toBeUndefined();
    expect([a.heldUses, b.heldUses, c.heldUses]).toEqual([0, 0, 0]);
  });

  it('reads the voucher again when the stack consumed a validation session', () => {
    const { cache, entries, holds, hold } = setup(snapshot('A'));
    const a = entries[0]!;
    holds.release(hold([{ entry: a, session: 'checkout-1' }]), true);
    expect(a.snapshot!.redeemedCount).toBe(4);
    expect(cache.fresh(voucherKey(WS, 'A'), Date.now())).toBeUndefined();
  });
});
