// Item targets, BUY_X_GET_Y, FREE_SHIPPING and rule conditions on target items through the real service (HTTP, the
// engine's partitions, PostgreSQL): validate, redeem, a promotion tier, qualification and a stack all answer the
// per-item discountAmount the pure core computes (test/checkout/item-discounts.test.ts has the hand-computed tables).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let api: ApiClient;
beforeAll(async () => {
  service = await startTestService();
  api = (await service.newWorkspace()).api;
});
afterAll(async () => service?.close());

const created = <T = Record<string, any>>(path: string, body: Record<string, unknown>) => api.create<T>(path, body);
const code = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
const voucher = (discount: unknown, extra: Record<string, unknown> = {}) =>
  created<{ code: string }>('/api/v1/vouchers', { code: code('I'), type: 'DISCOUNT', discount, ...extra });

// 3 shirts (10.00, 5.00 ×2), 2 pairs of socks at 3.00, 4.90 shipping: 37.90 in all.
const cart = (shipping: number | null = 490) => ({
  amount: 1_000 + 2 * 500 + 2 * 300 + (shipping ?? 0),
  currency: 'EUR',
  items: [
    { productId: 'tee', quantity: 1, price: 1_000, categories: ['shirts'], collections: ['summer'], metadata: { brand: 'acme' } },
    { productId: 'polo', sku: 'polo-m', quantity: 2, price: 500, categories: ['shirts'], metadata: { brand: 'other' } },
    { productId: 'socks', quantity: 2, price: 300, categories: ['socks'], collections: ['basics'] },
  ],
  ...(shipping !== null ? { shipping: { amount: shipping } } : {}),
});
const shares = (body: { order: { items: Array<{ discountAmount: number }> } }) => body.order.items.map((i) => i.discountAmount);
const B2G1_SHIRTS = { type: 'BUY_X_GET_Y', buy: { quantity: 2, target: { categories: ['shirts'] } }, get: { quantity: 1 } };

describe('discounts on target items through the service', () => {
  it('BUY_X_GET_Y from a campaign template: validate and redeem land the free shirt on the cheapest line', async () => {
    const campaign = await created<{ id: string }>('/api/v1/campaigns', { name: 'b2g1', type: 'DISCOUNT_COUPONS', voucher: { type: 'DISCOUNT', discount: B2G1_SHIRTS } });
    const v = await created<{ code: string; discount: unknown }>('/api/v1/vouchers', { campaignId: campaign.id });
    expect(v.discount).toEqual({ ...B2G1_SHIRTS, get: { quantity: 1, percentOff: 100 } });
    const valid = await api.post(`/api/v1/vouchers/${v.code}/validate`, { order: cart() });
    expect(valid.body).toMatchObject({ valid: true, discount: { type: 'BUY_X_GET_Y', amount: 500 }, order: { amount: 3_090, discountAmount: 500, totalAmount: 2_590, shipping: { amount: 490, discountAmount: 0 } } });
    expect(shares(valid.body)).toEqual([0, 500, 0]);
    const redeemed = await api.post(`/api/v1/vouchers/${v.code}/redemption`, { order: cart(), idempotencyKey: randomUUID() });
    expect(redeemed.body).toMatchObject({ ok: true, redemption: { amount: 500 }, order: { discountAmount: 500 } });
    expect(shares(redeemed.body)).toEqual([0, 500, 0]);

    // The template changes to FREE_SHIPPING: the next voucher takes the shipping off.
    const patched = await api.patch(`/api/v1/campaigns/${campaign.id}`, { voucher: { type: 'DISCOUNT', discount: { type: 'FREE_SHIPPING' } } });
    expect(patched.status).toBe(200);
    const next = await created<{ code: string }>('/api/v1/vouchers', { campaignId: campaign.id });
    const free = await api.post(`/api/v1/vouchers/${next.code}/validate`, { order: cart() });
    expect(free.body).toMatchObject({ valid: true, discount: { type: 'FREE_SHIPPING', amount: 490 }, order: { totalAmount: 2_600, shipping: { amount: 490, discountAmount: 490 } } });
    expect(shares(free.body)).toEqual([0, 0, 0]);
  });

  it('FREE_SHIPPING without shipping gives nothing; a PERCENT on a target discounts those lines and never the shipping', async () => {
    const free = await voucher({ type: 'FREE_SHIPPING' });
    const none = await api.post(`/api/v1/vouchers/${free.code}/validate`, { order: cart(null) });
    expect(none.body).toMatchObject({ valid: true, discount: { amount: 0 }, order: { totalAmount: 2_600 } });
    expect(none.body.order.shipping).toBeUndefined();

    const byMetadata = await voucher({ type: 'PERCENT', percentOff: 20, target: { metadata: { brand: 'acme' } } });
    const acme = await api.post(`/api/v1/vouchers/${byMetadata.code}/validate`, { order: cart() });
    expect(acme.body).toMatchObject({ discount: { amount: 200 } });
    expect(shares(acme.body)).toEqual([200, 0, 0]);
    const bySku = await voucher({ type: 'AMOUNT', amountOff: 5_000, target: { skus: ['polo-m'] } }, { currency: 'EUR' });
    expect(shares((await api.post(`/api/v1/vouchers/${bySku.code}/validate`, { order: cart() })).body)).toEqual([0, 1_000, 0]);
    const byCollection = await voucher({ type: 'PERCENT', percentOff: 50, target: { collections: ['basics', 'winter'] } });
    expect(shares((await api.post(`/api/v1/vouchers/${byCollection.code}/validate`, { order: cart() })).body)).toEqual([0, 0, 300]);
    const byProduct = await voucher({ type: 'PERCENT', percentOff: 10, target: { productIds: ['tee', 'socks'] } });
    expect(shares((await api.post(`/api/v1/vouchers/${byProduct.code}/validate`, { order: cart() })).body)).toEqual([100, 0, 60]);
    // Untargeted: 10% of the goods (26.00), not of the shipping.
    const whole = await voucher({ type: 'PERCENT', percentOff: 10 });
    expect((await api.post(`/api/v1/vouchers/${whole.code}/validate`, { order: cart() })).body).toMatchObject({ discount: { amount: 260 }, order: { shipping: { discountAmount: 0 } } });
  });

  it('a promotion tier with BUY_X_GET_Y: promotions/validate, qualification and the tier redemption agree', async () => {
    const own = (await service.newWorkspace()).api;
    const campaign = await own.create<{ id: string }>('/api/v1/campaigns', { name: 'socks deal', type: 'PROMOTION' });
    // Buy 1 shirt, get a pair of socks at 50%: 3 shirts → 2 groups, both socks half price.
    const deal = { type: 'BUY_X_GET_Y', buy: { quantity: 1, target: { categories: ['shirts'] } }, get: { quantity: 1, target: { categories: ['socks'] }, percentOff: 50 } };
    const tier = await own.create<{ id: string }>(`/api/v1/campaigns/${campaign.id}/tiers`, { name: 'socks at half', discount: deal });
    const promotions = await own.post('/api/v1/promotions/validate', { order: cart() });
    expect(promotions.body.promotions).toHaveLength(1);
    expect(promotions.body.promotions[0]).toMatchObject({ tierId: tier.id, discount: { type: 'BUY_X_GET_Y', amount: 300 } });
    expect(shares(promotions.body.promotions[0])).toEqual([0, 0, 300]);
    const qualified = await own.post('/api/v1/qualifications', { order: cart() });
    expect(qualified.body.data[0]).toMatchObject({ tierId: tier.id, discount: { amount: 300 } });
    expect(shares(qualified.body.data[0])).toEqual([0, 0, 300]);
    const redeemed = await own.post(`/api/v1/promotions/tiers/${tier.id}/redemption`, { order: cart(), idempotencyKey: randomUUID() });
    expect(redeemed.body).toMatchObject({ ok: true, redemption: { tierId: tier.id, amount: 300 } });
    expect(shares(redeemed.body)).toEqual([0, 0, 300]);
    // maxApplications 1 on an update: one pair only.
    await own.patch(`/api/v1/promotions/tiers/${tier.id}`, { discount: { ...deal, maxApplications: 1 } });
    const capped = await own.post(`/api/v1/promotions/tiers/${tier.id}/redemption`, { order: cart(), idempotencyKey: randomUUID() });
    expect(capped.body).toMatchObject({ ok: true, redemption: { amount: 150 } });
    expect(shares(capped.body)).toEqual([0, 0, 150]);
  });

  it('a stack of BUY_X_GET_Y, a targeted PERCENT and FREE_SHIPPING: each lands where it applies', async () => {
    const b2g1 = await voucher(B2G1_SHIRTS, { priority: 3 });
    const socks = await voucher({ type: 'PERCENT', percentOff: 50, target: { categories: ['socks'] } }, { priority: 2 });
    const free = await voucher({ type: 'FREE_SHIPPING' }, { priority: 1 });
    const stack = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: free.code }, { code: socks.code }, { code: b2g1.code }], order: cart(), idempotencyKey: randomUUID() });
    expect(stack.body).toMatchObject({ ok: true, order: { amount: 3_090, discountAmount: 1_290, totalAmount: 1_800, shipping: { amount: 490, discountAmount: 490 } } });
    expect(stack.body.results.map((r: { amount: number }) => r.amount)).toEqual([490, 300, 500]);
    expect(shares(stack.body)).toEqual([0, 500, 300]);
  });
});

describe('validation rules on the items a target matches', () => {
  it('counts target units and sums target line totals, through a voucher rule on the service', async () => {
    const twoShirts = await created<{ id: string }>('/api/v1/validation-rules', {
      name: 'two shirts, 15.00 of them',
      conditions: {
        all: [
          { field: 'order.items.quantity', target: { categories: ['shirts'] }, op: 'gte', value: 2 },
          { field: 'order.items.amount', target: { categories: ['shirts'] }, op: 'gte', value: 1_500 },
        ],
      },
    });
    const v = await voucher({ type: 'PERCENT', percentOff: 10 }, { validationRuleIds: [twoShirts.id] });
    expect((await api.post(`/api/v1/vouchers/${v.code}/validate`, { order: cart() })).body).toMatchObject({ valid: true, discount: { amount: 260 } });
    const oneShirt = { amount: 1_600, currency: 'EUR', items: [cart().items[0], cart().items[2]] };
    const refused = await api.post(`/api/v1/vouchers/${v.code}/validate`, { order: oneShirt });
    expect(refused.body).toMatchObject({ valid: false, code: 'validation_rule_failed', explanations: [{ condition: { path: '/all/0', field: 'order.items.quantity', target: { categories: ['shirts'] } } }] });
    const cheapShirts = { amount: 1_000, currency: 'EUR', items: [{ productId: 'x', quantity: 2, price: 500, categories: ['shirts'] }] };
    expect((await api.post(`/api/v1/vouchers/${v.code}/redemption`, { order: cheapShirts })).body).toMatchObject({ ok: false, code: 'validation_rule_failed', explanations: [{ condition: { path: '/all/1' } }] });
  });

  it('refuses malformed targets, discounts and orders with a 400 naming the field', async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['/api/v1/validation-rules', { name: 'r', conditions: { field: 'order.amount', target: { categories: ['x'] }, op: 'gt', value: 1 } }],
      ['/api/v1/validation-rules', { name: 'r', conditions: { field: 'order.items.amount', target: {}, op: 'gt', value: 1 } }],
      ['/api/v1/vouchers', { code: code('X'), type: 'DISCOUNT', discount: { type: 'BUY_X_GET_Y', buy: { quantity: 2 }, get: { quantity: 1 } } }],
      ['/api/v1/vouchers', { code: code('X'), type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5, target: { color: ['red'] } } }],
      ['/api/v1/vouchers', { code: code('X'), type: 'DISCOUNT', discount: { type: 'BUY_X_GET_Y', buy: { quantity: 1, target: { skus: ['a'] } }, get: { quantity: 1, percentOff: 0 } } }],
    ];
    for (const [path, body] of cases) {
      const res = await api.post(path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBeDefined();
    }
    const v = await voucher({ type: 'FREE_SHIPPING' });
    const tooMuchShipping = await api.post(`/api/v1/vouchers/${v.code}/validate`, { order: { amount: 100, currency: 'EUR', shipping: { amount: 101 } } });
    expect(tooMuchShipping.status).toBe(400);
  });
});
