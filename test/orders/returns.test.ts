// Order returns over real HTTP, the real engine and a real PostgreSQL: a three-item order (a discount, a referral
// code, a gift card and points paid, points earned at a tier multiplier) returned in two parts; by amount; replays,
// refusals and a cancel that returns the order whole first.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { expectLedgerMatchesCaches } from '../loyalty/support.js';
import { drain, figures, giftLedgerMismatches, openShop, placeOrder, type OrderSpec } from './returns-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterEach(async () => {
  await expectLedgerMatchesCaches(service.pool);
  expect(await giftLedgerMismatches(service.pool)).toEqual([]);
});
afterAll(async () => service?.close());

const threeItems: OrderSpec = {
  items: [
    { sku: 'shoe', quantity: 1, price: 6_000 },
    { sku: 'sock', quantity: 4, price: 500 },
    { sku: 'cap', quantity: 2, price: 1_000 },
  ],
  points: 3_000,
  gift: 2_000,
  pointsMoney: 1_500,
  referral: true,
};

describe('order returns', () => {
  it('gives back in proportion over two partial returns, and the second leaves what one whole return leaves', async () => {
    const { api } = await service.newWorkspace();
    const shop = await openShop(api);
    const placed = await placeOrder(api, service.pool, shop, threeItems);
    const before = await figures(service.pool, placed, shop);
    expect(before.order).toMatchObject({ status: 'PAID', amount: 10_000, returned_amount: 0 });

    const first = await api.post(`/api/v1/orders/${placed.orderId}/returns`, { items: [{ sku: 'sock', quantity: 2 }, { index: 2, quantity: 1 }], reason: 'too small', idempotencyKey: 'r-1' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({ orderId: placed.orderId, status: 'PARTIALLY_RETURNED', items: [{ index: 1, sku: 'sock', quantity: 2 }, { index: 2, sku: 'cap', quantity: 1 }] });
    const replay = await api.post(`/api/v1/orders/${placed.orderId}/returns`, { items: [{ sku: 'sock', quantity: 2 }, { index: 2, quantity: 1 }], reason: 'too small', idempotencyKey: 'r-1' });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ ...first.body, idempotent: true });
    const mid = await figures(service.pool, placed, shop);
    // Each effect's ledger event, and the return's own.
    const events = (await service.pool.query(`SELECT type, payload FROM events WHERE payload->>'returnId' = $1 OR (type = 'loyalty.points.reversed' AND payload->>'orderId' = $2)`, [first.body.id, placed.orderId])).rows;
    expect(events.map((e) => e.type).sort()).toEqual(['loyalty.points.adjusted', 'loyalty.points.reversed', 'order.returned', 'voucher.balance.adjusted']);
    expect(events.find((e) => e.type === 'order.returned').payload).toEqual({ orderId: placed.orderId, returnId: first.body.id, amount: first.body.amount, status: 'PARTIALLY_RETURNED' });
    expect(first.body.reversals.giftCredits).toBeGreaterThan(0);
    expect(first.body.reversals.pointsPaid).toBeGreaterThan(0);
    expect(first.body.reversals.pointsEarned).toBeGreaterThan(0);
    expect(mid.order).toMatchObject({ status: 'PARTIALLY_RETURNED', returned_amount: first.body.amount });
    expect(mid.vouchers.find((v: any) => v.code === shop.giftCode).gift_balance).toBeGreaterThan(before.vouchers.find((v: any) => v.code === shop.giftCode).gift_balance);

    const tooMuch = await api.post(`/api/v1/orders/${placed.orderId}/returns`, { items: [{ sku: 'sock', quantity: 3 }] });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body.code).toBe('return_exceeds_order');

    const second = await api.post(`/api/v1/orders/${placed.orderId}/returns`, { items: [{ sku: 'shoe', quantity: 1 }, { sku: 'sock', quantity: 2 }, { sku: 'cap', quantity: 1 }] });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect(second.body.status).toBe('RETURNED');
    await drain(service.pool);
    const after = await figures(service.pool, placed, shop);

    // The same order returned whole at once reaches the same state.
    const { api: api2 } = await service.newWorkspace();
    const shop2 = await openShop(api2);
    const placed2 = await placeOrder(api2, service.pool, shop2, threeItems);
    const whole = await api2.post(`/api/v1/orders/${placed2.orderId}/returns`, { amount: (await figures(service.pool, placed2, shop2)).order.amount - discountOf(placed2.stack) });
    expect(whole.status, JSON.stringify(whole.body)).toBe(201);
    await drain(service.pool);
    expect(normalize(await figures(service.pool, placed2, shop2), shop2)).toEqual(normalize(after, shop));
    expect(after.order).toMatchObject({ status: 'RETURNED', returned_amount: first.body.amount + second.body.amount });
    expect(after.redemptions.every((r: any) => r.status === 'ROLLED_BACK' && r.reason === 'RETURN')).toBe(true);
    expect(after.conversions).toEqual([{ status: 'REVERTED' }]);
    const list = await api.get(`/api/v1/orders/${placed.orderId}/returns`);
    expect(list.body.data.map((r: any) => r.id)).toEqual([first.body.id, second.body.id]);
    expect((await api.get(`/api/v1/orders/${placed.orderId}`)).body).toMatchObject({ status: 'RETURNED', returnedAmount: after.order.returned_amount });
  });

  it('refuses bad bodies with 400 and unknown orders with 404; a cancel returns the order whole first', async () => {
    const { api } = await service.newWorkspace();
    const shop = await openShop(api);
    const placed = await placeOrder(api, service.pool, shop, { ...threeItems, referral: false });
    expect((await api.post(`/api/v1/orders/${placed.orderId}/returns`, { amount: 10, items: [{ index: 0, quantity: 1 }] })).status).toBe(400);
    expect((await api.post(`/api/v1/orders/${placed.orderId}/returns`, {})).status).toBe(400);
    expect((await api.post(`/api/v1/orders/${placed.orderId}/returns`, { items: [{ index: 7, quantity: 1 }] })).status).toBe(400);
    expect((await api.post(`/api/v1/orders/${randomUUID()}/returns`, { amount: 1 })).status).toBe(404);
    expect((await api.post(`/api/v1/orders/${placed.orderId}/returns`, { amount: 10_000 })).status).toBe(409);
    const part = await api.post(`/api/v1/orders/${placed.orderId}/returns`, { amount: 1_000 });
    expect(part.status).toBe(201);
    const canceled = await api.patch(`/api/v1/orders/${placed.orderId}`, { status: 'CANCELED' });
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'CANCELED' });
    await drain(service.pool);
    const after = await figures(service.pool, placed, shop);
    expect(after.redemptions.every((r: any) => r.status === 'ROLLED_BACK')).toBe(true);
    expect(after.vouchers.find((v: any) => v.code === shop.giftCode).gift_balance).toBe(2_000);
    expect(after.vouchers.find((v: any) => v.code === 'MEMBER')).toMatchObject({ points_balance: 3_000, points_lifetime: 0 });
    expect((await api.post(`/api/v1/orders/${placed.orderId}/returns`, { amount: 1 })).status).toBe(409);
  });
});

function discountOf(stack: any): number {
  return stack.order.discountAmount;
}

/** The figures with the shop's own codes named by their role, so two shops compare. */
function normalize(f: any, shop: { discountCode: string; giftCode: string; referralCode: string }) {
  const role = (code: string) => (code === shop.discountCode ? 'DISCOUNT' : code === shop.giftCode ? 'GIFT' : code === shop.referralCode ? 'REFERRAL' : code);
  return {
    ...f,
    redemptions: f.redemptions.map((r: any) => ({ ...r, voucher_code: role(r.voucher_code) })).sort((a: any, b: any) => a.voucher_code.localeCompare(b.voucher_code)),
    vouchers: f.vouchers.map((v: any) => ({ ...v, code: role(v.code) })).sort((a: any, b: any) => a.code.localeCompare(b.code)),
    uses: f.uses.length,
  };
}
