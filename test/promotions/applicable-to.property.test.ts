// applicableTo math as properties: a voucher whose rule narrows it to some products discounts only those lines, never
// more than what is left of them, and the item shares always add up to the discount exactly.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideSingle, type VoucherSnapshot } from '../../src/checkout/redemption.rules.js';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';

const products = ['shoes', 'socks', 'hats'];

const discountArb = fc.oneof(
  fc.record({ type: fc.constant('PERCENT' as const), percentOff: fc.integer({ min: 1, max: 10_000 }).map((n) => n / 100) }),
  fc.record({ type: fc.constant('AMOUNT' as const), amountOff: fc.integer({ min: 0, max: 50_000 }) }),
  fc.record({ type: fc.constant('FIXED' as const), fixedAmount: fc.integer({ min: 0, max: 50_000 }) }),
);

const orderArb = fc
  .array(fc.record({ productId: fc.constantFrom(...products), quantity: fc.integer({ min: 1, max: 4 }), price: fc.integer({ min: 0, max: 20_000 }) }), { minLength: 1, maxLength: 6 })
  .map((items) => ({ amount: items.reduce((sum, i) => sum + i.price * i.quantity, 0), currency: 'EUR', items }));

function voucher(discount: VoucherSnapshot['discount'], productIds: string[], maxDiscount: number | null): VoucherSnapshot {
  return {
    id: 'v', workspaceId: 'w', code: 'V', type: 'DISCOUNT', campaignId: null, discount, currency: null, active: true, startDate: null,
    expirationDate: null, redemptionLimit: null, redeemedCount: 0, perCustomerLimit: null, priority: null, exclusive: null, maxDiscount,
    customerId: null, giftBalance: null, points: null, referral: null, validationRuleIds: ['r'], configVersion: 0, campaign: null, kind: 'CODE', name: null, schedule: null,
    timeZone: 'UTC',
    rules: [{ id: 'r', name: 'r', conditions: { field: 'order.amount', op: 'gte', value: 0 }, errorMessage: null, applicableTo: { productIds } }],
  };
}

const use = { customerId: null, customerGiven: false, customerUses: 0, heldUses: 0, heldBalance: 0 };

const calendar = new ZoneCalendar();

describe('applicableTo', () => {
  it('discounts only matching lines, within them, with shares summing exactly', () => {
    fc.assert(
      fc.property(discountArb, fc.subarray(products, { minLength: 1 }), orderArb, fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: null }), (discount, productIds, order, maxDiscount) => {
        const { decision, state } = decideSingle(voucher(discount, productIds, maxDiscount), use, { order }, Date.now(), calendar);
        expect(decision.ok).toBe(true);
        if (!decision.ok) return;
        const matching = order.items.map((item, i) => (productIds.includes(item.productId) ? i : -1)).filter((i) => i >= 0);
        const matchingTotal = matching.reduce((sum, i) => sum + order.items[i]!.price * order.items[i]!.quantity, 0);
        expect(decision.amount).toBeLessThanOrEqual(matchingTotal);
        if (maxDiscount !== null) expect(decision.amount).toBeLessThanOrEqual(maxDiscount);
        expect(state.discountShares.reduce((a, b) => a + b, 0)).toBe(decision.amount);
        state.discountShares.forEach((share, i) => {
          if (!matching.includes(i)) expect(share).toBe(0);
          expect(share).toBeLessThanOrEqual(order.items[i]!.price * order.items[i]!.quantity);
        });
        if (discount.type === 'PERCENT' && maxDiscount === null) {
          const hundredths = BigInt(Math.round(discount.percentOff * 100));
          expect(decision.amount).toBe(Number((BigInt(matchingTotal) * hundredths * 2n + 10_000n) / 20_000n));
        }
      }),
      { numRuns: 500 },
    );
  });
});
