// The best deal's search as properties, on generated offers (PERCENT, AMOUNT, FIXED and UNIT discounts, priorities,
// exclusive ones, caps, applicableTo rules, campaigns sharing a budget, ineligible ones): checked against an
// independent enumerator that decides every allowed combination (every set within the stack limit, each in the
// canonical order) with evaluateStack itself; with 20 offers every allowed set of the 2^20. Never beaten; exact up to
// 20 offers; the answer is what the stack gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bestDeal, stackOrder } from '../../src/checkout/best-deal.rules.js';
import { budgetRefusal, eligibility, grant, isExclusive, startOrder, type OrderState, type VoucherSnapshot } from '../../src/checkout/redemption.rules.js';
import { evaluateStack, type StackEntry } from '../../src/checkout/stack.rules.js';
import type { Order } from '../../src/contract/checkout.schemas.js';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';

const NOW = Date.UTC(2026, 0, 1);
const calendar = new ZoneCalendar();
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
      const evaluation = evaluateStack(chosen, order, limit, NOW, calendar);
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

/**
 * Every allowed set of the 2^n, without the search's bound. A stack decides its members one by one in its order (a
 * fold: eligibility, grant on what the earlier ones left, the campaign budget less what they took), so the sets are
 * walked depth first in the canonical order and each set is its parent set plus one step: 2^20 sets cost 2^20 steps.
 * Sets the stacking rules refuse whatever their order are skipped, by rules read off the contract: an offer its own
 * eligibility refuses (which reads the voucher, the customer and the cart, never the other members) is refused in
 * every stack; an exclusive offer stacks with nothing; a set past the stack limit is refused. One set in 50 is decided
 * again by evaluateStack itself, which must agree. Returns the largest discount and how many sets were weighed.
 */
function enumerateAllowed(entries: StackEntry[], order: Order, limit: number): { best: number; sets: number } {
  const alone = entries.map((e) => grant(e.voucher!, e.use, { order }, startOrder(order), false).amount);
  const canonical = stackOrder(entries, alone).map((i) => entries[i]!);
  const refused = (e: StackEntry) => eligibility(e.voucher!, e.use, { order }, NOW, calendar) !== undefined;
  let best = 0;
  let sets = 0;
  for (const e of canonical) {
    if (refused(e) || !isExclusive(e.voucher!)) continue;
    sets++;
    const evaluation = evaluateStack([e], order, limit, NOW, calendar);
    if (evaluation.ok) best = Math.max(best, evaluation.state.discountAmount);
  }
  const usable = canonical.filter((e) => !refused(e) && !isExclusive(e.voucher!));
  const chosen: StackEntry[] = [];
  type Spent = Record<string, { uses: number; amount: number }>;
  const visit = (from: number, state: OrderState, spent: Spent) => {
    for (let i = from; i < usable.length; i++) {
      const e = usable[i]!;
      const v = e.voucher!;
      const next: OrderState = { ...state, lines: state.lines.map((l) => ({ ...l })), discountShares: [...state.discountShares] };
      const given = grant(v, e.use, { order, amount: e.amount }, next, true);
      const campaignSpent = v.campaign ? (spent[v.campaign.id] ?? { uses: 0, amount: 0 }) : undefined;
      const allowed = budgetRefusal(v, e.use.budget, given.amount, campaignSpent) === undefined;
      chosen.push(e);
      sets++;
      if (sets % 50 === 0) {
        const again = evaluateStack(chosen, order, limit, NOW, calendar);
        expect(again.ok).toBe(allowed);
        if (allowed) expect(again.state.discountAmount).toBe(next.discountAmount);
      }
      if (allowed) {
        best = Math.max(best, next.discountAmount);
        const nextSpent = v.campaign ? { ...spent, [v.campaign.id]: { uses: campaignSpent!.uses + 1, amount: campaignSpent!.amount + given.amount } } : spent;
        if (chosen.length < limit) visit(i + 1, next, nextSpent);
      }
      chosen.pop();
    }
  };
  visit(0, startOrder(order), {});
  return { best, sets };
}

function check(entries: StackEntry[], order: Order, limit: number) {
  const result = bestDeal(entries, order, limit, NOW, calendar);
  expect(result.evaluation.ok).toBe(true);
  expect(result.members.length).toBeLessThanOrEqual(limit);
  // The answer is what the stack itself gives, listed in the order it is to be redeemed.
  const again = evaluateStack(result.members.map((i) => entries[i]!), order, limit, NOW, calendar);
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

  it('is exact with 20 offers under any stack limit: every allowed set of the 2^20 weighed', () => {
    fc.assert(
      fc.property(fc.array(offerArb, { minLength: 20, maxLength: 20 }), orderArb, fc.integer({ min: 5, max: 30 }), (offers, order, limit) => {
        const entries = offers.map(entryOf);
        const result = check(entries, order, limit);
        expect(result.exact).toBe(true);
        expect(result.evaluation.state.discountAmount).toBe(enumerateAllowed(entries, order, limit).best);
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  it('is exact with 20 offers that all stack (no exclusive or refused one): every allowed set weighed', () => {
    const stackable = offerArb.map((o) => ({ ...o, exclusive: false, active: true }));
    fc.assert(
      fc.property(fc.array(stackable, { minLength: 20, maxLength: 20 }), orderArb, (offers, order) => {
        const entries = offers.map(entryOf);
        const result = check(entries, order, 30);
        expect(result.exact).toBe(true);
        const all = enumerateAllowed(entries, order, 30);
        // Every set of the offers outside c1 is allowed (c2 and no campaign: no budget; 30 > 20: no stack limit).
        expect(all.sets).toBeGreaterThanOrEqual(2 ** offers.filter((o) => o.campaign !== 'c1').length - 1);
        expect(result.evaluation.state.discountAmount).toBe(all.best);
      }),
      { numRuns: 4 },
    );
  }, 120_000);

  it('answers within its node budget beyond that, exact: false when it stopped short', () => {
    fc.assert(
      fc.property(fc.array(offerArb, { minLength: 40, maxLength: 40 }), orderArb, (offers, order) => {
        const entries = offers.map(entryOf);
        const result = bestDeal(entries, order, 30, NOW, calendar, { maxNodes: 500 });
        expect(result.evaluation.ok).toBe(true);
        expect(result.nodes).toBeLessThanOrEqual(501 + entries.length);
        if (!result.exact) expect(result.nodes).toBeGreaterThan(500);
      }),
      { numRuns: 20 },
    );
  });
});
