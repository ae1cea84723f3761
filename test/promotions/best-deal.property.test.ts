// The best deal's search as properties, on generated offers (PERCENT, AMOUNT, FIXED and UNIT discounts, priorities,
// exclusive ones, caps, applicableTo rules, campaigns sharing a budget, ineligible ones): checked against an
// independent enumerator that decides every allowed combination (every set within the stack limit, each in the
// canonical order) with evaluateStack itself. Never beaten; exact up to 20 offers; the answer is what the stack gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestDeal, stackOrder } from '../../src/checkout/best-deal.rules.js';
import { grant, startOrder, type VoucherSnapshot } from '../../src/checkout/redemption.rules.js';
import { evaluateStack, type StackEntry } from '../../src/checkout/stack.rules.js';
import type { Order } from '../../src/contract/checkout.schemas.js';

const NOW = Date.UTC(2026, 0, 1);
const products = ['shoes', 'socks', 'hats'];

const discountArb = fc.oneof(
  fc.record({ type: fc.constant('PERCENT' as const), percentOff: fc.integer({ min: 1, max: 6_000 }).map((n) => n / 100) }),
  fc.record({ type: fc.constant('AMOUNT' as const), amountOff: fc.integer({ min: 0, max: 8_000 }) }),
  fc.record({ type: fc.constant('FIXED' as const), fixedAmount: fc.integer({ min: 0, max: 30_000 }) }),
  fc.record({ type: fc.constant('UNIT' as const), unitOff: fc.integer({ min: 1, max: 3 }), productId: fc.constantFrom(...products) }),
);

const offerArb = fc.record({
  discount: discountArb,
  priority: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }),
  exclusive: fc.boolean().map((b) => b && Math.random() < 0.3),
  maxDiscount: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: null }),
  productIds: fc.option(fc.subarray(products, { minLength: 1 }), { nil: null }),
  campaign: fc.option(fc.constantFrom('c1', 'c2'), { nil: null }),
  active: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
});

const orderArb = fc
  .array(fc.record({ productId: fc.constantFrom(...products), quantity: fc.integer({ min: 1, max: 4 }), price: fc.integer({ min: 1, max: 9_000 }) }), { minLength: 1, maxLength: 4 })
  .map((items): Order => ({ amount: items.reduce((sum, i) => sum + i.price * i.quantity, 0), currency: 'EUR', items }));

/** Campaign c1 allows 2 redemptions and 3,000 of discount left; c2 is unlimited. */
const budgets = { c1: { uses: 2, amount: 3_000 }, c2: { uses: null, amount: null } } as const;

type Offer = typeof offerArb extends fc.Arbitrary<infer T> ? T : never;

function entryOf(offer: Offer, i: number): StackEntry {
  const campaignId = offer.campaign;
  const voucher: VoucherSnapshot = {
    id: `v${i}`, workspaceId: 'w', code: `C${i}`, type: 'DISCOUNT', campaignId, discount: offer.discount, currency: null, active: offer.active,
    startDate: null, expirationDate: null, redemptionLimit: null, redeemedCount: 0, perCustomerLimit: null, priority: offer.priority,
    exclusive: offer.exclusive, maxDiscount: offer.maxDiscount, customerId: null, giftBalance: null, points: null, referral: null,
    validationRuleIds: offer.productIds ? ['r'] : [], configVersion: 0, kind: 'CODE', name: null, schedule: null, timeZone: 'UTC',
    campaign: campaignId
      ? { id: campaignId, active: true, startDate: null, expirationDate: null, currency: null, priority: 0, exclusive: false, version: 0, validationRuleIds: [], schedule: null, budget: campaignId === 'c1' ? { total: { redemptions: 10 } } : null }
      : null,
    rules: offer.productIds
      ? [{ id: 'r', name: 'r', conditions: { field: 'order.amount', op: 'gte', value: 0 }, errorMessage: null, applicableTo: { productIds: offer.productIds } }]
      : [],
  } as VoucherSnapshot;
  const use = { customerId: null, customerGiven: false, customerUses: 0, heldUses: 0, heldBalance: 0, budget: campaignId ? budgets[campaignId as 'c1' | 'c2'] : undefined };
  return { code: voucher.code, voucher, use };
}

/**
 * Every set of at most `limit` entries, each decided by evaluateStack in the canonical order: the largest discount. (The
 * canonical order of a set is that of the whole restricted to it, so the sets are taken in that order.)
 */
function enumerate(entries: StackEntry[], order: Order, limit: number): number {
  const alone = entries.map((e) => grant(e.voucher!, e.use, { order }, startOrder(order), false).amount);
  const ordered = stackOrder(entries, alone).map((i) => entries[i]!);
  let best = 0;
  const chosen: StackEntry[] = [];
  const visit = (from: number) => {
    if (chosen.length) {
      const evaluation = evaluateStack(chosen, order, limit, NOW);
      if (evaluation.ok) best = Math.max(best, evaluation.state.discountAmount);
    }
    if (chosen.length === limit) return;
    for (let i = from; i < ordered.length; i++) {
      chosen.push(ordered[i]!);
      visit(i + 1);
      chosen.pop();
    }
  };
  visit(0);
  return best;
}

/** A random allowed set of the entries (at most `limit`), decided by evaluateStack in the canonical order. */
function randomSet(entries: StackEntry[], order: Order, limit: number, pick: number[]): number {
  const alone = entries.map((e) => grant(e.voucher!, e.use, { order }, startOrder(order), false).amount);
  const chosen = [...new Set(pick.map((p) => p % entries.length))].slice(0, limit).sort((a, b) => a - b);
  const subset = chosen.map((i) => entries[i]!);
  const ordered = stackOrder(subset, chosen.map((i) => alone[i]!)).map((k) => subset[k]!);
  const evaluation = evaluateStack(ordered, order, limit, NOW);
  return evaluation.ok ? evaluation.state.discountAmount : 0;
}

function check(entries: StackEntry[], order: Order, limit: number) {
  const result = bestDeal(entries, order, limit, NOW);
  expect(result.evaluation.ok).toBe(true);
  expect(result.members.length).toBeLessThanOrEqual(limit);
  // The answer is what the stack itself gives, listed in the order it is to be redeemed.
  const again = evaluateStack(result.members.map((i) => entries[i]!), order, limit, NOW);
  expect(again.ok).toBe(true);
  expect(again.state.discountAmount).toBe(result.evaluation.state.discountAmount);
  return result;
}

describe('the best deal', () => {
  it('is never beaten by any allowed combination (up to 8 offers, every set enumerated)', () => {
    fc.assert(
      fc.property(fc.array(offerArb, { minLength: 0, maxLength: 8 }), orderArb, fc.integer({ min: 1, max: 8 }), (offers, order, limit) => {
        const entries = offers.map(entryOf);
        const result = check(entries, order, limit);
        expect(result.exact).toBe(true);
        expect(result.evaluation.state.discountAmount).toBe(enumerate(entries, order, limit));
      }),
      { numRuns: 300 },
    );
  });

  it('is exact and never beaten with 20 offers (every set of up to 4 enumerated)', () => {
    fc.assert(
      fc.property(fc.array(offerArb, { minLength: 20, maxLength: 20 }), orderArb, fc.integer({ min: 1, max: 4 }), (offers, order, limit) => {
        const entries = offers.map(entryOf);
        const result = check(entries, order, limit);
        expect(result.exact).toBe(true);
        expect(result.evaluation.state.discountAmount).toBe(enumerate(entries, order, limit));
      }),
      { numRuns: 15 },
    );
  });

  it('is exact with 20 offers under any stack limit, and no random allowed set beats it', () => {
    fc.assert(
      fc.property(
        fc.array(offerArb, { minLength: 20, maxLength: 20 }),
        orderArb,
        fc.integer({ min: 5, max: 30 }),
        fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 30 }), { minLength: 200, maxLength: 200 }),
        (offers, order, limit, picks) => {
          const entries = offers.map(entryOf);
          const result = check(entries, order, limit);
          expect(result.exact).toBe(true);
          for (const pick of picks) expect(randomSet(entries, order, limit, pick)).toBeLessThanOrEqual(result.evaluation.state.discountAmount);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('answers within its node budget beyond that, exact: false when it stopped short', () => {
    fc.assert(
      fc.property(fc.array(offerArb, { minLength: 40, maxLength: 40 }), orderArb, (offers, order) => {
        const entries = offers.map(entryOf);
        const result = bestDeal(entries, order, 30, NOW, { maxNodes: 500 });
        expect(result.evaluation.ok).toBe(true);
        expect(result.nodes).toBeLessThanOrEqual(501 + entries.length);
        if (!result.exact) expect(result.nodes).toBeGreaterThan(500);
      }),
      { numRuns: 20 },
    );
  });
});
