// Property tests (fast-check) of the discount math and the stack rules: pure functions, many random cases.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocate, cappedDiscount, percentOf, type LineState } from '../../src/checkout/discount.rules.js';
import { pointsFor, pointsWorth, type VoucherSnapshot } from '../../src/checkout/redemption.rules.js';
import { evaluateStack, type StackEntry } from '../../src/checkout/stack.rules.js';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';

const calendar = new ZoneCalendar();

const money = fc.integer({ min: 0, max: 10_000_000 });

const discountArb = fc.oneof(
  fc.record({ type: fc.constant('PERCENT' as const), percentOff: fc.integer({ min: 1, max: 10_000 }).map((n) => n / 100), amountLimit: fc.option(money, { nil: undefined }) }),
  fc.record({ type: fc.constant('AMOUNT' as const), amountOff: money }),
  fc.record({ type: fc.constant('FIXED' as const), fixedAmount: money }),
  fc.record({ type: fc.constant('UNIT' as const), unitOff: fc.integer({ min: 1, max: 5 }), productId: fc.constantFrom('a', 'b') }),
);

const itemsArb = fc.array(fc.record({ productId: fc.constantFrom('a', 'b', 'c'), quantity: fc.integer({ min: 1, max: 5 }), price: fc.integer({ min: 0, max: 100_000 }) }), { maxLength: 6 });

function voucher(i: number, over: Partial<VoucherSnapshot>): VoucherSnapshot {
  return {
    id: `v${i}`, workspaceId: 'w', code: `C${i}`, type: 'DISCOUNT', campaignId: null, discount: { type: 'AMOUNT', amountOff: 100 }, currency: null,
    active: true, startDate: null, expirationDate: null, redemptionLimit: null, redeemedCount: 0, perCustomerLimit: null, priority: 0,
    exclusive: false, maxDiscount: null, customerId: null, giftBalance: null, points: null, referral: null, validationRuleIds: [], configVersion: 0, campaign: null,
    kind: 'CODE', name: null, schedule: null, timeZone: 'UTC', rules: [], ...over,
  };
}

const noUse = { customerId: null, customerGiven: false, customerUses: 0, heldUses: 0, heldBalance: 0 };

describe('discount math', () => {
  it('allocate: shares add up exactly and none exceeds its weight when the total fits', () => {
    fc.assert(
      fc.property(fc.array(money, { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 100_000_000 }), (weights, t) => {
        const sum = weights.reduce((a, b) => a + b, 0);
        const total = sum > 0 ? t % (sum + 1) : t;
        const shares = allocate(total, weights);
        expect(shares.reduce((a, b) => a + b, 0)).toBe(total);
        if (sum > 0) shares.forEach((s, i) => expect(s).toBeLessThanOrEqual(weights[i]!));
        shares.forEach((s) => expect(s).toBeGreaterThanOrEqual(0));
      }),
    );
  });

  it('percentOf rounds half up, exactly', () => {
    fc.assert(
      fc.property(money, fc.integer({ min: 1, max: 10_000 }), (amount, hundredths) => {
        const exact = (BigInt(amount) * BigInt(hundredths) * 2n + 10_000n) / 20_000n;
        expect(percentOf(amount, hundredths / 100)).toBe(Number(exact));
      }),
    );
    expect(percentOf(5, 10)).toBe(1); // 0.5 rounds up
    expect(percentOf(4, 10)).toBe(0);
  });

  // allocate and percentOf compute in doubles while the products fit below 2^53 and in BigInt past that: both paths
  // must give what exact integer arithmetic gives, at every size (small carts and figures near the limit alike).
  it('allocate equals exact largest-remainder arithmetic on both sides of 2^53', () => {
    const exactAllocate = (total: number, weights: number[]): number[] => {
      const sum = weights.reduce((a, b) => a + b, 0);
      const basis = sum > 0 ? weights : weights.map(() => 1);
      const t = BigInt(total);
      const s = BigInt(sum > 0 ? sum : weights.length);
      const shares = basis.map((w) => (t * BigInt(w)) / s);
      const order = basis.map((w, i) => ({ i, r: (t * BigInt(w)) % s })).sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1));
      let left = t - shares.reduce((a, b) => a + b, 0n);
      for (const { i } of order) {
        if (left === 0n) break;
        shares[i]! += 1n;
        left -= 1n;
      }
      return shares.map(Number);
    };
    const size = fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 2 ** 26 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
    fc.assert(
      fc.property(fc.array(size, { minLength: 1, maxLength: 8 }), size, (weights, total) => {
        expect(allocate(total, weights)).toEqual(exactAllocate(total, weights));
      }),
      { numRuns: 2_000 },
    );
  });

  it('percentOf equals exact half-up rounding for any amount up to 2^53', () => {
    fc.assert(
      fc.property(fc.oneof(money, fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })), fc.integer({ min: 0, max: 100_000_000 }), (amount, millionths) => {
        const exact = (BigInt(amount) * BigInt(millionths) * 2n + 100_000_000n) / 200_000_000n;
        expect(percentOf(amount, millionths / 1_000_000)).toBe(Number(exact));
      }),
      { numRuns: 2_000 },
    );
  });

  // Pay with points converts in doubles while the product fits below 2^53 and in BigInt past that, like percentOf.
  it('pointsWorth and pointsFor equal exact floor and ceiling on both sides of 2^53', () => {
    const count = fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 2 ** 30 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }));
    const rate = fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 2 ** 26 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }));
    fc.assert(
      fc.property(count, rate, rate, (n, points, amount) => {
        const value = { points, amount };
        const worth = (BigInt(n) * BigInt(amount)) / BigInt(points);
        expect(pointsWorth(n, value)).toBe(worth > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(worth));
        const per = BigInt(amount);
        expect(pointsFor(n, value)).toBe(Number((BigInt(n) * BigInt(points) + per - 1n) / per));
      }),
      { numRuns: 2_000 },
    );
  });

  it('a capped discount is never negative, never above maxDiscount, never above what is left', () => {
    fc.assert(
      fc.property(discountArb, money, fc.option(money, { nil: null }), itemsArb, (discount, remaining, max, items) => {
        const lines: LineState[] = items.map((it) => ({ ...it, remaining: it.price * it.quantity }));
        const d = cappedDiscount(discount, remaining, lines, max);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(remaining);
        if (max !== null) expect(d).toBeLessThanOrEqual(max);
        expect(Number.isInteger(d)).toBe(true);
      }),
    );
  });
});

describe('stack rules', () => {
  const entriesArb = fc.array(
    fc.record({
      discount: discountArb,
      priority: fc.integer({ min: -3, max: 3 }),
      maxDiscount: fc.option(money, { nil: null }),
      gift: fc.option(money, { nil: null }),
      exclusive: fc.boolean(),
    }),
    { minLength: 1, maxLength: 6 },
  );

  it('never gives more than the order, keeps priority order, and item shares add up to the discount', () => {
    fc.assert(
      fc.property(entriesArb, money, itemsArb, (specs, amount, items) => {
        const entries: StackEntry[] = specs.map((s, i) => ({
          code: `C${i}`,
          voucher: voucher(i, s.gift !== null ? { type: 'GIFT_CARD', discount: null, giftBalance: s.gift + 1, priority: s.priority } : { discount: s.discount, priority: s.priority, maxDiscount: s.maxDiscount, exclusive: s.exclusive && specs.length > 1 }),
          use: noUse,
        }));
        const order = { amount, currency: 'EUR', items };
        const result = evaluateStack(entries, order, 30, 0, calendar);
        if (!result.ok) {
          expect(result.failure!.code).toBe('exclusive_conflict');
          // Every result but the failing one is skipped; none has an amount.
          expect(result.results.filter((r) => r.code !== 'skipped')).toHaveLength(1);
          return;
        }
        const total = result.state.discountAmount + result.state.giftAmount;
        expect(total).toBeLessThanOrEqual(amount);
        expect(result.results.reduce((a, r) => a + (r.amount ?? 0), 0)).toBe(total);
        const priorities = result.members.map((m) => m.voucher.priority!);
        expect(priorities).toEqual([...priorities].sort((a, b) => b - a));
        for (let i = 1; i < result.members.length; i++) {
          if (priorities[i] === priorities[i - 1]) expect(result.members[i]!.index).toBeGreaterThan(result.members[i - 1]!.index);
        }
        if (items.length) expect(result.state.discountShares.reduce((a, b) => a + b, 0)).toBe(result.state.discountAmount);
        for (const m of result.members) if (m.voucher.maxDiscount !== null) expect(m.grant.amount).toBeLessThanOrEqual(m.voucher.maxDiscount);
      }),
    );
  });

  it('an exclusive voucher fails a batch of more than one at the first exclusive met in priority order', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ priority: fc.integer({ min: 0, max: 3 }), exclusive: fc.boolean() }), { minLength: 2, maxLength: 6 }), (specs) => {
        const entries = specs.map((s, i) => ({ code: `C${i}`, voucher: voucher(i, s), use: noUse }));
        const result = evaluateStack(entries, { amount: 100_000, currency: 'EUR' }, 30, 0, calendar);
        const order = specs.map((s, i) => ({ ...s, i })).sort((a, b) => b.priority - a.priority || a.i - b.i);
        const firstExclusive = order.find((s) => s.exclusive);
        if (!firstExclusive) expect(result.ok).toBe(true);
        else {
          expect(result.failure?.code).toBe('exclusive_conflict');
          expect(result.results[firstExclusive.i]!.code).toBe('exclusive_conflict');
        }
      }),
    );
  });
});
