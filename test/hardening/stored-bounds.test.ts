// Bounds outside the engine: every stored amount and sum stays within 2^53-1. An operation whose result would pass it
// is a 400 naming the field; CHECK constraints refuse such a write even past the code; and a value stored past the
// bound before those existed reads as the bound, so no read fails on a stored value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { int8ToNumber } from '../../src/platform/database.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

const MAX = Number.MAX_SAFE_INTEGER;
const PAST = 2 ** 53;

let service: TestService;
let api: ApiClient;
beforeAll(async () => {
  service = await startTestService();
  ({ api } = await service.newWorkspace());
});
afterAll(async () => service?.close());

function expectRefused(res: { status: number; body: any }, path: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('invalid_request');
  expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
}

describe('orders', () => {
  const line = (quantity: number, price: number) => ({ productId: 'p', quantity, price });

  it('refuses a line whose quantity × price reaches 2^53, and items that add up past 2^53-1, on create and update', async () => {
    expectRefused(await api.post('/api/v1/orders', { amount: 1, currency: 'EUR', items: [line(2, 2 ** 52)] }), 'body.items.0');
    expectRefused(await api.post('/api/v1/orders', { amount: 1, currency: 'EUR', items: [line(1, 1), line(1_000_000, 2 ** 40)] }), 'body.items.1');
    expectRefused(await api.post('/api/v1/orders', { amount: 1, currency: 'EUR', items: [line(1, MAX), line(1, 1)] }), 'body.items');
    expectRefused(await api.post('/api/v1/orders', { amount: PAST, currency: 'EUR' }), 'body.amount');

    const order = await api.create('/api/v1/orders', { amount: 1, currency: 'EUR', items: [line(1, 1)] });
    expectRefused(await api.patch(`/api/v1/orders/${order.id}`, { items: [line(3, 3 * 2 ** 51)] }), 'body.items.0');
    expectRefused(await api.patch(`/api/v1/orders/${order.id}`, { amount: PAST }), 'body.amount');
    expect((await api.get(`/api/v1/orders/${order.id}`)).body).toMatchObject({ amount: 1, items: [line(1, 1)] });
    expect((await service.pool.query('SELECT count(*)::int AS n FROM orders')).rows[0].n).toBe(1);
  });

  it('keeps an order of exactly 2^53-1, lines included, and reads it back exactly', async () => {
    const order = await api.create('/api/v1/orders', { amount: MAX, currency: 'EUR', items: [line(1, MAX - 2), line(2, 1)] });
    const read = await api.get(`/api/v1/orders/${order.id}`);
    expect(read.body).toMatchObject({ amount: MAX, items: [line(1, MAX - 2), line(2, 1)] });
  });
});

describe('promotion tiers', () => {
  it('refuses a maximum discount of 2^53 and keeps one of 2^53-1', async () => {
    const promotion = await api.create('/api/v1/campaigns', { name: 'bounds', type: 'PROMOTION' });
    const tier = { name: 'cap', discount: { type: 'PERCENT', percentOff: 10 } };
    expectRefused(await api.post(`/api/v1/campaigns/${promotion.id}/tiers`, { ...tier, maxDiscount: PAST }), 'body.maxDiscount');
    const kept = await api.create(`/api/v1/campaigns/${promotion.id}/tiers`, { ...tier, maxDiscount: MAX });
    expectRefused(await api.patch(`/api/v1/promotions/tiers/${kept.id}`, { maxDiscount: PAST }), 'body.maxDiscount');
    expect((await api.get(`/api/v1/promotions/tiers/${kept.id}`)).body.maxDiscount).toBe(MAX);
  });
});

describe('the bounds of the other stored figures, swept once', () => {
  it('refuses 2^53 wherever a stored amount, limit or budget is given', async () => {
    const campaign = await api.create('/api/v1/campaigns', { name: 'b', type: 'DISCOUNT_COUPONS' });
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/api/v1/vouchers', { type: 'GIFT_CARD', gift: { amount: PAST, currency: 'EUR' } }, 'body.gift.amount'],
      ['POST', '/api/v1/vouchers', { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: PAST } }, 'body.discount.amountOff'],
      ['POST', '/api/v1/vouchers', { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 }, maxDiscount: PAST }, 'body.maxDiscount'],
      ['POST', '/api/v1/vouchers', { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 }, redemptionLimit: 2 ** 31 }, 'body.redemptionLimit'],
      ['PATCH', `/api/v1/campaigns/${campaign.id}`, { budget: { total: { discountAmount: PAST } } }, 'body.budget.total.discountAmount'],
      ['POST', '/api/v1/vouchers/NONE/validate', { order: { amount: PAST, currency: 'EUR' } }, 'body.order.amount'],
      ['POST', '/api/v1/vouchers/NONE/redemption', { order: { amount: 1, currency: 'EUR' }, amount: PAST }, 'body.amount'],
    ];
    for (const [method, path, body, field] of cases) expectRefused(await api.request(method, path, { body }), field);
  });
});

describe('in the database', () => {
  it('refuses a stored amount past 2^53-1 by CHECK constraint, whatever writes it', async () => {
    const order = await api.create('/api/v1/orders', { amount: 5, currency: 'EUR' });
    await expect(service.pool.query('UPDATE orders SET amount = $2::int8 WHERE id = $1', [order.id, String(PAST)])).rejects.toMatchObject({ code: '23514' });
    const voucher = await api.create('/api/v1/vouchers', { code: 'CHK-1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 } });
    await expect(service.pool.query('UPDATE vouchers SET max_discount = $2::int8 WHERE id = $1', [voucher.id, String(PAST)])).rejects.toMatchObject({ code: '23514' });
    const redeemed = await api.post('/api/v1/vouchers/CHK-1/redemption', { order: { amount: 1_000, currency: 'EUR' } });
    expect(redeemed.body.ok).toBe(true);
    for (const column of ['amount', 'order_amount']) {
      await expect(service.pool.query(`UPDATE redemptions SET ${column} = $2::int8 WHERE id = $1`, [redeemed.body.redemption.id, String(PAST)])).rejects.toMatchObject({ code: '23514' });
    }
  });

  it('reads a value stored past the bound before the constraints existed as 2^53-1: get and list answer', async () => {
    // Older data: the constraints are lifted for this test database only, as if the rows predated them.
    await service.pool.query('ALTER TABLE orders DROP CONSTRAINT orders_amount_within_safe_range');
    await service.pool.query('ALTER TABLE redemptions DROP CONSTRAINT redemptions_amounts_within_safe_range');
    const order = await api.create('/api/v1/orders', { amount: 5, currency: 'EUR' });
    await service.pool.query('UPDATE orders SET amount = $2::int8 WHERE id = $1', [order.id, '1152921504606846976']);
    expect((await api.get(`/api/v1/orders/${order.id}`)).body.amount).toBe(MAX);
    const list = await api.get('/api/v1/orders?limit=100');
    expect(list.status).toBe(200);
    expect(list.body.data.find((o: { id: string }) => o.id === order.id).amount).toBe(MAX);

    await api.create('/api/v1/vouchers', { code: 'OLD-1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 } });
    const redeemed = await api.post('/api/v1/vouchers/OLD-1/redemption', { order: { amount: 1_000, currency: 'EUR' } });
    await service.pool.query('UPDATE redemptions SET amount = $2::int8, order_amount = $2::int8 WHERE id = $1', [redeemed.body.redemption.id, '9223372036854775807']);
    const read = await api.get(`/api/v1/redemptions/${redeemed.body.redemption.id}`);
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.amount).toBe(MAX);
    expect((await api.get('/api/v1/redemptions?limit=100')).status).toBe(200);
  });

  it('parses int8 exactly within ±(2^53-1) and as the bound beyond it', () => {
    expect(int8ToNumber('0')).toBe(0);
    expect(int8ToNumber('-42')).toBe(-42);
    expect(int8ToNumber(String(MAX))).toBe(MAX);
    expect(int8ToNumber(String(-MAX))).toBe(-MAX);
    expect(int8ToNumber('9007199254740992')).toBe(MAX);
    expect(int8ToNumber('9223372036854775807')).toBe(MAX);
    expect(int8ToNumber('-9223372036854775808')).toBe(-MAX);
  });
});
