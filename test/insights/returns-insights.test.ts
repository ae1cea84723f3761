// Insights of order returns over a real service and PostgreSQL: a partial return and the whole rest of an order (a
// discount, a gift card, points paid and earned) move GET /insights/redemptions' `returns` per period by exactly what
// the returns answered, and GET /insights/loyalty's refunded and reversed points with them; a replay adds nothing; another workspace and a campaign filter see none of it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { drain, openShop, placeOrder, type OrderSpec } from '../orders/returns-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
}, 60_000);
afterAll(async () => service?.close());

const spec: OrderSpec = {
  items: [
    { sku: 'shoe', quantity: 1, price: 6_000 },
    { sku: 'sock', quantity: 4, price: 500 },
  ],
  points: 3_000,
  gift: 2_000,
  pointsMoney: 1_000,
  referral: false,
};

/** Answers are cached 2 s: asks until `check` holds, for at most 10 s. */
async function eventually<T>(ask: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    const value = await ask();
    if (check(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
}

const totals = (periods: any[]) =>
  periods.reduce(
    (t, p) => ({
      returns: t.returns + p.returns,
      returnedAmount: t.returnedAmount + p.returnedAmount,
      returnedDiscountAmount: t.returnedDiscountAmount + p.returnedDiscountAmount,
      returnedGiftAmount: t.returnedGiftAmount + p.returnedGiftAmount,
      returnedPointsPaid: t.returnedPointsPaid + p.returnedPointsPaid,
      returnedPointsEarned: t.returnedPointsEarned + p.returnedPointsEarned,
    }),
    { returns: 0, returnedAmount: 0, returnedDiscountAmount: 0, returnedGiftAmount: 0, returnedPointsPaid: 0, returnedPointsEarned: 0 },
  );

const of = (reply: any) => ({
  returns: 1,
  returnedAmount: reply.amount,
  returnedDiscountAmount: reply.reversals.discount,
  returnedGiftAmount: reply.reversals.giftCredits,
  returnedPointsPaid: reply.reversals.pointsPaid,
  returnedPointsEarned: reply.reversals.pointsEarned,
});
const add = (a: ReturnType<typeof of>, b: ReturnType<typeof of>) =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v + (b as any)[k]])) as ReturnType<typeof of>;

describe('insights: order returns per period', () => {
  it('counts what each return gave back (amount, discount, gift credits, points paid and earned), in the period it was made', async () => {
    const { api } = await service.newWorkspace();
    const shop = await openShop(api);
    const placed = await placeOrder(api, service.pool, shop, spec);
    const empty = await api.get('/api/v1/insights/redemptions');
    expect(empty.status).toBe(200);
    expect(empty.body.returns).toEqual([]);

    const first = await api.post(`/api/v1/orders/${placed.orderId}/returns`, { items: [{ sku: 'sock', quantity: 2 }], idempotencyKey: 'ins-1' });
    expect(first.status).toBe(201);
    await drain(service.pool);
    expect(first.body.reversals.discount).toBeGreaterThan(0);
    expect(first.body.reversals.giftCredits + first.body.reversals.pointsPaid).toBeGreaterThan(0);
    expect(first.body.reversals.pointsEarned).toBeGreaterThan(0);
    const afterFirst = await eventually(() => api.get('/api/v1/insights/redemptions?interval=hour'), (r) => r.body.returns?.length > 0);
    expect(afterFirst.body.returns).toHaveLength(1);
    expect(afterFirst.body.returns[0]).toMatchObject({ currency: 'EUR', ...of(first.body) });
    // The period is the hour the return was made in.
    const hour = new Date(first.body.createdAt);
    hour.setUTCMinutes(0, 0, 0);
    expect(afterFirst.body.returns[0].period).toBe(hour.toISOString());

    // A replay is the same return: nothing more.
    expect((await api.post(`/api/v1/orders/${placed.orderId}/returns`, { items: [{ sku: 'sock', quantity: 2 }], idempotencyKey: 'ins-1' })).status).toBe(200);
    const rest = await api.post(`/api/v1/orders/${placed.orderId}/returns`, { items: [{ sku: 'shoe', quantity: 1 }, { sku: 'sock', quantity: 2 }] });
    expect(rest.body.status).toBe('RETURNED');
    const expected = add(of(first.body), of(rest.body));
    const daily = await eventually(() => api.get('/api/v1/insights/redemptions'), (r) => totals(r.body.returns ?? []).returns === 2);
    expect(totals(daily.body.returns)).toEqual(expected);
    expect(daily.body.returns.every((p: any) => p.currency === 'EUR')).toBe(true);

    // The loyalty figures count the same points: given back (points paid) as refunded, taken back (points earned) as
    // reversed, the partial return's RETURN entries and the last return's rollback and reversed earning alike.
    const loyalty = await eventually(
      () => api.get(`/api/v1/insights/loyalty?programId=${shop.programId}`),
      (r) => r.body.points?.reversed === expected.returnedPointsEarned,
    );
    expect(loyalty.body.points).toMatchObject({ refunded: expected.returnedPointsPaid, reversed: expected.returnedPointsEarned });

    // Returns are the order's: a campaign filter leaves them out; another workspace sees none.
    const campaign = await api.create('/api/v1/campaigns', { name: 'Other', type: 'DISCOUNT_COUPONS', currency: 'EUR' });
    expect((await api.get(`/api/v1/insights/redemptions?campaignId=${campaign.id}`)).body.returns).toBeUndefined();
    const other = await service.newWorkspace();
    expect((await other.api.get('/api/v1/insights/redemptions')).body.returns).toEqual([]);
  }, 60_000);
});
