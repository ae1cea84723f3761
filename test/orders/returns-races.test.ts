// Races on real HTTP, the real engine and a real PostgreSQL: 20 racing returns of one order never return more than the
// order; returns racing redemptions and rollbacks of the same gift card keep its ledger equal to its balance.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { ledgerMismatches } from '../loyalty/support.js';
import { drain, giftLedgerMismatches, openShop, placeOrder, type OrderSpec } from './returns-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

const spec: OrderSpec = {
  items: [
    { sku: 'a', quantity: 5, price: 1_000 },
    { sku: 'b', quantity: 5, price: 1_000 },
  ],
  points: 10_000,
  gift: 3_000,
  pointsMoney: 2_000,
  referral: false,
};

describe('order returns under races', () => {
  it('20 racing returns of one order return at most the order, and the last one rolls it back once', async () => {
    const { api } = await service.newWorkspace();
    const shop = await openShop(api, { gift: 3_000 });
    const placed = await placeOrder(api, service.pool, shop, spec);
    const paid = 10_000 - placed.stack.order.discountAmount;
    const share = Math.ceil(paid / 7);
    // The points payment drew from the card's one bucket: its entry names it and no draw row exists yet, so the racing
    // returns race to write that row (loyalty_refund, schema/0074) before they give points back.
    const drawsOfPayment = () =>
      service.pool.query(
        `SELECT e.bucket_id, d.bucket_id AS drawn, d.points, d.refunded FROM redemptions r JOIN loyalty_ledger_entries e ON e.id = r.points_entry_id
           LEFT JOIN loyalty_point_draws d ON d.entry_id = e.id WHERE r.order_id = (SELECT source_id FROM orders WHERE id = $1)`,
        [placed.orderId],
      );
    const before = (await drawsOfPayment()).rows;
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({ drawn: null });
    expect(before[0].bucket_id).not.toBeNull();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post(`/api/v1/orders/${placed.orderId}/returns`, i % 2 ? { amount: share } : { items: [{ index: i % 4 < 2 ? 0 : 1, quantity: 1 }] }),
      ),
    );
    expect(answers.every((a) => a.status === 201 || (a.status === 409 && a.body.code === 'return_exceeds_order')), JSON.stringify(answers.map((a) => a.body))).toBe(true);
    const created = answers.filter((a) => a.status === 201);
    const returned = created.reduce((s, a) => s + a.body.amount, 0);
    const order = (await service.pool.query('SELECT status, returned_amount FROM orders WHERE id = $1', [placed.orderId])).rows[0];
    expect(order.returned_amount).toBe(returned);
    expect(returned).toBeLessThanOrEqual(paid);
    expect(answers.filter((a) => a.status === 409).length).toBeGreaterThan(0);
    // Whatever the split, the gift credits and points given back never pass what paid for the order.
    const gift = created.reduce((s, a) => s + a.body.reversals.giftCredits, 0);
    expect(gift).toBeLessThanOrEqual(3_000);
    if (order.status === 'RETURNED') {
      expect(created.filter((a) => a.body.status === 'RETURNED')).toHaveLength(1);
      expect(gift).toBe(3_000);
      const rolled = await service.pool.query(`SELECT count(*)::int AS n FROM redemption_rollbacks rb JOIN redemptions r ON r.id = rb.redemption_id WHERE r.order_id = (SELECT source_id FROM orders WHERE id = $1)`, [placed.orderId]);
      expect(rolled.rows[0].n).toBe(3);
    }
    await drain(service.pool);
    expect(await giftLedgerMismatches(service.pool)).toEqual([]);
    expect(await ledgerMismatches(service.pool)).toEqual([]);
    const balance = (await service.pool.query('SELECT gift_balance FROM vouchers WHERE code = $1', [shop.giftCode])).rows[0].gift_balance;
    expect(balance).toBe(gift);
    // One draw row, written once whoever came first, into the bucket the entry names; never more given back than drawn.
    const after = (await drawsOfPayment()).rows;
    expect(after).toHaveLength(1);
    expect(after[0].drawn).toBe(before[0].bucket_id);
    expect(after[0].refunded).toBeGreaterThan(0);
    expect(after[0].refunded).toBeLessThanOrEqual(after[0].points);
  });

  it('returns racing redemptions and rollbacks of the same gift card keep its ledger equal to its balance', async () => {
    const { api } = await service.newWorkspace();
    const shop = await openShop(api, { gift: 1_000_000 });
    const orders: Awaited<ReturnType<typeof placeOrder>>[] = [];
    for (let i = 0; i < 4; i++) orders.push(await placeOrder(api, service.pool, shop, { ...spec, gift: 4_000, pointsMoney: 0 }));
    const giftRedemption = (o: any) => o.stack.results.find((r: any) => r.voucherCode === shop.giftCode).redemptionId;
    const racing = [
      // Partial returns of the first two orders, then the rest of the second.
      ...[1, 2, 3].map(() => api.post(`/api/v1/orders/${orders[0]!.orderId}/returns`, { items: [{ index: 0, quantity: 1 }] })),
      api.post(`/api/v1/orders/${orders[1]!.orderId}/returns`, { amount: 1_000 }),
      api.post(`/api/v1/orders/${orders[1]!.orderId}/returns`, { items: [{ index: 1, quantity: 5 }, { index: 0, quantity: 5 }] }),
      // The third order's gift redemption rolled back while the order is returned.
      api.post(`/api/v1/redemptions/${giftRedemption(orders[2])}/rollback`, {}),
      api.post(`/api/v1/orders/${orders[2]!.orderId}/returns`, { amount: 2_000 }),
      api.post(`/api/v1/orders/${orders[2]!.orderId}/returns`, { amount: 1_000 }),
      // The fourth order returned whole while new redemptions take from the card.
      api.post(`/api/v1/orders/${orders[3]!.orderId}/returns`, { items: [{ index: 0, quantity: 5 }, { index: 1, quantity: 5 }] }),
      ...Array.from({ length: 12 }, () =>
        api.post(`/api/v1/vouchers/${shop.giftCode}/redemption`, { order: { id: `o-${randomUUID()}`, amount: 700, currency: 'EUR' }, idempotencyKey: randomUUID() }),
      ),
    ];
    const answers = await Promise.all(racing);
    for (const a of answers) expect([200, 201, 409], JSON.stringify(a.body)).toContain(a.status);
    await drain(service.pool);
    expect(await giftLedgerMismatches(service.pool)).toEqual([]);
    expect(await ledgerMismatches(service.pool)).toEqual([]);
    // The card's balance: the credits of what still stands, no more and no less.
    const { rows } = await service.pool.query(
      `SELECT v.gift_balance, (SELECT coalesce(sum(r.amount - r.returned_credit), 0)::bigint FROM redemptions r WHERE r.voucher_id = v.id AND r.status = 'SUCCEEDED') AS held
         FROM vouchers v WHERE v.code = $1`,
      [shop.giftCode],
    );
    expect(rows[0].gift_balance + Number(rows[0].held)).toBe(1_000_000);
    // The rolled-back redemption gave back only what the returns had not.
    const third = await service.pool.query('SELECT status, returned_credit FROM redemptions WHERE id = $1', [giftRedemption(orders[2])]);
    expect(third.rows[0].status).toBe('ROLLED_BACK');
  });
});
