// The qualification index never leaves out a tier that applies: for random tiers (rules over amounts, currencies and
// products, under all/any/not) and random carts, every tier the full decision accepts is among the candidates.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QualificationIndex } from '../../src/domains/promotions/qualification-index.js';
import { decideSingle, type VoucherSnapshot } from '../../src/checkout/redemption.rules.js';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';
import type { ConditionTree } from '../../src/contract/condition.schemas.js';

const calendar = new ZoneCalendar();

const products = ['a', 'b', 'c', 'd'];
const currencies = ['EUR', 'USD'];

const leaf: fc.Arbitrary<ConditionTree> = fc.oneof(
  fc.record({ field: fc.constant('order.amount' as const), op: fc.constantFrom('gte' as const, 'gt' as const, 'lt' as const, 'eq' as const), value: fc.integer({ min: 0, max: 20_000 }) }),
  fc.record({ field: fc.constant('order.currency' as const), op: fc.constant('eq' as const), value: fc.constantFrom(...currencies) }),
  fc.record({ field: fc.constantFrom('order.items.productId' as const, 'order.items.sku' as const), op: fc.constantFrom('contains' as const, 'eq' as const), value: fc.constantFrom(...products) }),
  fc.record({ field: fc.constantFrom('order.items.productId' as const), op: fc.constant('in' as const), value: fc.uniqueArray(fc.constantFrom(...products), { minLength: 1, maxLength: 3 }) }),
) as fc.Arbitrary<ConditionTree>;

const tree: fc.Arbitrary<ConditionTree> = fc.letrec<{ node: ConditionTree }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ all: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ any: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ not: tie('node') }),
  ) as fc.Arbitrary<ConditionTree>,
})).node;

function tier(i: number, conditions: ConditionTree[], currency: string | null): VoucherSnapshot {
  return {
    id: `t${i}`, workspaceId: 'w', code: `tier:t${i}`, type: 'DISCOUNT', campaignId: null, discount: { type: 'AMOUNT', amountOff: 100 }, currency,
    active: true, startDate: null, expirationDate: null, redemptionLimit: null, redeemedCount: 0, perCustomerLimit: null, priority: null,
    exclusive: null, maxDiscount: null, customerId: null, giftBalance: null, points: null, referral: null, validationRuleIds: [], configVersion: 0, campaign: null,
    kind: 'TIER', name: `t${i}`, schedule: null, timeZone: 'UTC',
    rules: conditions.map((c, k) => ({ id: `r${i}.${k}`, name: 'r', conditions: c, errorMessage: null, applicableTo: null })),
  };
}

const cart = fc.record({
  amount: fc.integer({ min: 0, max: 20_000 }),
  currency: fc.constantFrom(...currencies),
  items: fc.array(fc.record({ productId: fc.constantFrom(...products), sku: fc.constantFrom(...products), quantity: fc.integer({ min: 1, max: 3 }), price: fc.integer({ min: 0, max: 5_000 }) }), { maxLength: 4 }),
});

const use = { customerId: null, customerGiven: false, customerUses: 0, heldUses: 0, heldBalance: 0 };

describe('qualification index', () => {
  it('candidates include every tier whose full decision accepts the cart', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ rules: fc.array(tree, { maxLength: 2 }), currency: fc.option(fc.constantFrom(...currencies), { nil: null }) }), { minLength: 1, maxLength: 30 }),
        fc.array(cart, { minLength: 1, maxLength: 5 }),
        (specs, carts) => {
          const tiers = specs.map((s, i) => tier(i, s.rules, s.currency));
          const index = new QualificationIndex(tiers);
          for (const order of carts) {
            const candidates = new Set(index.candidates(order).map((t) => t.id));
            for (const t of tiers) {
              if (decideSingle(t, use, { order }, Date.now(), calendar).decision.ok) expect(candidates.has(t.id), `${t.id} left out`).toBe(true);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('excludes by currency, product and minimum amount, so a big catalogue yields few candidates', () => {
    const tiers = Array.from({ length: 20_000 }, (_, i) =>
      tier(i, [{ all: [{ field: 'order.items.productId', op: 'contains', value: `p${i % 5_000}` }, { field: 'order.amount', op: 'gte', value: (i % 7) * 1_000 }] }], i % 2 ? 'EUR' : 'USD'),
    );
    const index = new QualificationIndex(tiers);
    const order = { amount: 3_000, currency: 'EUR', items: [{ productId: 'p1', quantity: 1, price: 3_000 }, { productId: 'p8', quantity: 1, price: 0 }] };
    const candidates = index.candidates(order);
    expect(candidates.length).toBeLessThanOrEqual(8);
    for (const c of candidates) expect(c.currency).toBe('EUR');
  });
});
