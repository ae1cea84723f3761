// The checkout core on hand-computed carts: BUY_X_GET_Y (mixed prices, several groups, overlapping targets, a cap),
// FREE_SHIPPING with and without shipping, targets by each field, and where each discount lands per item. Pure.
import { describe, expect, it } from 'vitest';
import { Discount } from '../../src/contract/discount.schemas.js';
import { Order } from '../../src/contract/checkout.schemas.js';
import { Target } from '../../src/contract/target.schemas.js';
import { ConditionTree } from '../../src/contract/condition.schemas.js';
import { planDiscount, spreadPlan } from '../../src/checkout/discount.rules.js';
import { groupsOf } from '../../src/checkout/buy-x-get-y.rules.js';
import { targetMatches } from '../../src/checkout/item-target.rules.js';
import { startOrder, type OrderState } from '../../src/checkout/redemption.rules.js';
import { evaluateConditions } from '../../src/checkout/condition.rules.js';

type Item = { productId?: string; sku?: string; quantity: number; price: number; categories?: string[]; collections?: string[]; metadata?: Record<string, unknown> };

const order = (items: Item[], shipping?: number) => {
  const goods = items.reduce((s, i) => s + i.quantity * i.price, 0);
  return Order.parse({ amount: goods + (shipping ?? 0), currency: 'EUR', items, ...(shipping !== undefined ? { shipping: { amount: shipping } } : {}) });
};

/** Applies discounts in turn as a stack does: the amount of each, and the per-item and shipping shares of all. */
function apply(o: Order, ...discounts: unknown[]): { amounts: number[]; items: number[]; shipping: number; state: OrderState } {
  const state = startOrder(o);
  const amounts = discounts.map((d) => {
    const plan = planDiscount(Discount.parse(d), state, null);
    spreadPlan(plan, state.lines).forEach((s, i) => (state.discountShares[i]! += s));
    state.shippingLeft -= plan.shipping;
    state.shippingDiscount += plan.shipping;
    state.remaining -= plan.amount;
    return plan.amount;
  });
  return { amounts, items: state.discountShares, shipping: state.shippingDiscount, state };
}

const shirt = (productId: string, quantity: number, price: number): Item => ({ productId, quantity, price, categories: ['shirts'] });

describe('BUY_X_GET_Y against hand-computed carts', () => {
  const b2g1 = (extra: Record<string, unknown> = {}) => ({ type: 'BUY_X_GET_Y', buy: { quantity: 2, target: { categories: ['shirts'] } }, get: { quantity: 1 }, ...extra });
  const cases: Array<{ name: string; items: Item[]; discount: unknown; amount: number; shares: number[] }> = [
    {
      name: 'one target, mixed prices, two groups: the two cheapest units are free',
      // 6 shirt units → 2 groups of 2 bought + 1 free; the cheapest are B's two units at 5.00.
      items: [shirt('A', 3, 1_000), shirt('B', 2, 500), shirt('C', 1, 2_000)],
      discount: b2g1(),
      amount: 1_000,
      shares: [0, 1_000, 0],
    },
    {
      name: 'a cap: maxApplications 1 gives one unit',
      items: [shirt('A', 3, 1_000), shirt('B', 2, 500), shirt('C', 1, 2_000)],
      discount: b2g1({ maxApplications: 1 }),
      amount: 500,
      shares: [0, 500, 0],
    },
    {
      name: 'units that do not fill a group give nothing',
      items: [shirt('A', 2, 1_000), { productId: 'X', quantity: 5, price: 100 }],
      discount: b2g1(),
      amount: 0,
      shares: [0, 0],
    },
    {
      name: 'buy shoes, get socks at 50%: one group of 2 shoes, the cheapest sock at half price',
      items: [
        { productId: 'S1', quantity: 1, price: 8_000, categories: ['shoes'] },
        { productId: 'S2', quantity: 2, price: 6_000, categories: ['shoes'] },
        { productId: 'K1', quantity: 2, price: 900, categories: ['socks'] },
        { productId: 'K2', quantity: 1, price: 700, categories: ['socks'] },
      ],
      discount: { type: 'BUY_X_GET_Y', buy: { quantity: 2, target: { categories: ['shoes'] } }, get: { quantity: 1, target: { categories: ['socks'] }, percentOff: 50 } },
      amount: 350,
      shares: [0, 0, 0, 350],
    },
    {
      name: 'several groups across lines: 4 shoes give the two cheapest socks at 50% (700/2 + 900/2)',
      items: [
        { productId: 'S1', quantity: 2, price: 8_000, categories: ['shoes'] },
        { productId: 'S2', quantity: 2, price: 6_000, categories: ['shoes'] },
        { productId: 'K1', quantity: 2, price: 900, categories: ['socks'] },
        { productId: 'K2', quantity: 1, price: 700, categories: ['socks'] },
      ],
      discount: { type: 'BUY_X_GET_Y', buy: { quantity: 2, target: { categories: ['shoes'] } }, get: { quantity: 1, target: { categories: ['socks'] }, percentOff: 50 } },
      amount: 800,
      shares: [0, 0, 450, 350],
    },
    {
      name: 'overlapping targets: the A units must all be bought, so the free units are the dearer C ones',
      // buy 2 of product A, get 1 of category x (A and C are both x): 4 A units make the buy side of 2 groups.
      items: [
        { productId: 'A', quantity: 4, price: 500, categories: ['x'] },
        { productId: 'C', quantity: 2, price: 1_000, categories: ['x'] },
      ],
      discount: { type: 'BUY_X_GET_Y', buy: { quantity: 2, target: { productIds: ['A'] } }, get: { quantity: 1, target: { categories: ['x'] } } },
      amount: 2_000,
      shares: [0, 2_000],
    },
    {
      name: 'overlapping targets with one A unit to spare: it is given first (cheapest), then one C',
      items: [
        { productId: 'A', quantity: 5, price: 500, categories: ['x'] },
        { productId: 'C', quantity: 2, price: 1_000, categories: ['x'] },
      ],
      discount: { type: 'BUY_X_GET_Y', buy: { quantity: 2, target: { productIds: ['A'] } }, get: { quantity: 1, target: { categories: ['x'] } } },
      amount: 1_500,
      shares: [500, 1_000],
    },
    {
      name: 'percentOff rounds half up per line: 50% of 3.33 twice is 1.67 + 1.67',
      items: [
        { sku: 'P', quantity: 2, price: 5_000, collections: ['spring'] },
        { sku: 'Q', quantity: 1, price: 333, collections: ['spring'] },
        { sku: 'R', quantity: 1, price: 333, collections: ['spring'] },
      ],
      discount: { type: 'BUY_X_GET_Y', buy: { quantity: 1, target: { collections: ['spring'] } }, get: { quantity: 1, percentOff: 50 } },
      amount: 334,
      shares: [0, 167, 167],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = apply(order(c.items), c.discount);
      expect(result.amounts).toEqual([c.amount]);
      expect(result.items).toEqual(c.shares);
      expect(result.items.reduce((a, b) => a + b, 0)).toBe(c.amount);
    });
  }

  it('counts groups so that a unit serves one role in one group only', () => {
    expect(groupsOf(2, 1, 0, 0, 6)).toBe(2); // 6 shared units: 2 × (2 + 1)
    expect(groupsOf(2, 1, 0, 2, 4)).toBe(2); // 4 A (buy or get) + 2 C (get only)
    expect(groupsOf(2, 1, 10, 0, 1)).toBe(1); // one unit to give
    expect(groupsOf(1, 1, 0, 0, 7, 2)).toBe(2); // capped
  });

  it('after a 10% discount on the line, a free unit is worth what is left of it per unit', () => {
    const o = order([shirt('A', 2, 1_000)]);
    const result = apply(o, { type: 'PERCENT', percentOff: 10 }, { type: 'BUY_X_GET_Y', buy: { quantity: 1, target: { productIds: ['A'] } }, get: { quantity: 1 } });
    expect(result.amounts).toEqual([200, 900]);
    expect(result.items).toEqual([1_100]);
  });
});

describe('FREE_SHIPPING', () => {
  it('takes shipping off, lands on shipping, not on items; a second one finds nothing left', () => {
    const result = apply(order([shirt('A', 1, 4_500)], 500), { type: 'FREE_SHIPPING' }, { type: 'FREE_SHIPPING' });
    expect(result.amounts).toEqual([500, 0]);
    expect(result.shipping).toBe(500);
    expect(result.items).toEqual([0]);
  });

  it('gives nothing without shipping', () => {
    expect(apply(order([shirt('A', 1, 4_500)]), { type: 'FREE_SHIPPING' }).amounts).toEqual([0]);
  });

  it('is capped by maxDiscount', () => {
    const state = startOrder(order([shirt('A', 1, 4_500)], 500));
    expect(planDiscount({ type: 'FREE_SHIPPING' }, state, 300)).toMatchObject({ amount: 300, shipping: 300 });
  });

  it('other discounts leave shipping alone: 10% of a 100.00 order with 10.00 shipping is 9.00', () => {
    const result = apply(order([shirt('A', 1, 6_000), shirt('B', 1, 3_000)], 1_000), { type: 'PERCENT', percentOff: 10 }, { type: 'AMOUNT', amountOff: 100_000 });
    expect(result.amounts).toEqual([900, 8_100]);
    expect(result.items).toEqual([6_000, 3_000]);
    expect(result.state.remaining).toBe(1_000);
    expect(apply(order([shirt('A', 1, 6_000)], 1_000), { type: 'AMOUNT', amountOff: 100_000 }, { type: 'FREE_SHIPPING' }).amounts).toEqual([6_000, 1_000]);
  });
});

describe('targets by each field', () => {
  const items: Item[] = [
    { productId: 'p1', sku: 's1', quantity: 1, price: 1_000, categories: ['shoes', 'sale'], collections: ['summer'], metadata: { brand: 'acme', size: 42 } },
    { productId: 'p2', sku: 's2', quantity: 2, price: 2_000, categories: ['shirts'], collections: ['summer', 'basics'], metadata: { brand: 'other' } },
    { productId: 'p3', sku: 's3', quantity: 1, price: 4_000, categories: ['shoes'], metadata: { brand: 'acme', size: '42' } },
  ];
  const cases: Array<{ target: unknown; matched: number[]; shares: number[] }> = [
    { target: { productIds: ['p2', 'nope'] }, matched: [1], shares: [0, 400, 0] },
    { target: { skus: ['s1', 's3'] }, matched: [0, 2], shares: [100, 0, 400] },
    { target: { categories: ['shoes'] }, matched: [0, 2], shares: [100, 0, 400] },
    { target: { collections: ['basics'] }, matched: [1], shares: [0, 400, 0] },
    { target: { metadata: { brand: 'acme', size: 42 } }, matched: [0], shares: [100, 0, 0] },
    { target: { categories: ['shoes'], metadata: { brand: 'acme' } }, matched: [0, 2], shares: [100, 0, 400] },
    { target: { categories: ['shoes'], collections: ['summer'] }, matched: [0], shares: [100, 0, 0] },
  ];
  for (const c of cases) {
    it(`10% off ${JSON.stringify(c.target)}`, () => {
      const target = Target.parse(c.target);
      expect(items.flatMap((item, i) => (targetMatches(item, target) ? [i] : []))).toEqual(c.matched);
      const result = apply(order(items), { type: 'PERCENT', percentOff: 10, target: c.target });
      expect(result.items).toEqual(c.shares);
      expect(result.amounts[0]).toBe(c.shares.reduce((a, b) => a + b, 0));
    });
  }

  it('AMOUNT and FIXED with a target work on the matching line totals only', () => {
    expect(apply(order(items), { type: 'AMOUNT', amountOff: 9_999, target: { categories: ['shoes'] } }).items).toEqual([1_000, 0, 4_000]);
    // shoes total 50.00 becomes 30.00: 20.00 off, split 1:4 by line.
    expect(apply(order(items), { type: 'FIXED', fixedAmount: 3_000, target: { categories: ['shoes'] } }).items).toEqual([400, 0, 1_600]);
    expect(apply(order(items), { type: 'PERCENT', percentOff: 10, target: { categories: ['none'] } }).amounts).toEqual([0]);
  });

  it('refuses an empty target, unknown fields and a BUY_X_GET_Y without a buy target', () => {
    expect(Target.safeParse({}).success).toBe(false);
    expect(Target.safeParse({ brand: ['x'] }).success).toBe(false);
    expect(Target.safeParse({ metadata: { size: { nested: 1 } } }).success).toBe(false);
    expect(Discount.safeParse({ type: 'BUY_X_GET_Y', buy: { quantity: 1 }, get: { quantity: 1 } }).success).toBe(false);
    expect(Discount.safeParse({ type: 'BUY_X_GET_Y', buy: { quantity: 0, target: { skus: ['a'] } }, get: { quantity: 1 } }).success).toBe(false);
    expect(Discount.parse({ type: 'BUY_X_GET_Y', buy: { quantity: 1, target: { skus: ['a'] } }, get: { quantity: 1 } })).toMatchObject({ get: { percentOff: 100 } });
    expect(Order.safeParse({ amount: 100, currency: 'EUR', shipping: { amount: 101 } }).success).toBe(false);
  });
});

describe('rule conditions on the items a target matches', () => {
  const o = order([
    { productId: 'p1', quantity: 2, price: 1_500, categories: ['shoes'] },
    { productId: 'p2', quantity: 3, price: 500, categories: ['socks'] },
    { productId: 'p3', quantity: 1, price: 4_000, categories: ['shoes'] },
  ]);
  const holds = (tree: unknown) => evaluateConditions(ConditionTree.parse(tree), { order: o }).ok;
  it('counts units and sums line totals of the matching items only', () => {
    expect(holds({ field: 'order.items.quantity', target: { categories: ['shoes'] }, op: 'eq', value: 3 })).toBe(true);
    expect(holds({ field: 'order.items.quantity', target: { categories: ['shoes'] }, op: 'gte', value: 4 })).toBe(false);
    expect(holds({ field: 'order.items.amount', target: { categories: ['shoes'] }, op: 'eq', value: 7_000 })).toBe(true);
    expect(holds({ field: 'order.items.amount', op: 'eq', value: 8_500 })).toBe(true);
    expect(holds({ field: 'order.items.amount', target: { categories: ['hats'] }, op: 'gt', value: 0 })).toBe(false);
  });
  it('refuses a target on a field other than order.items.*', () => {
    expect(ConditionTree.safeParse({ field: 'order.amount', target: { categories: ['shoes'] }, op: 'gt', value: 1 }).success).toBe(false);
  });
});
