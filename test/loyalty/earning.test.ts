// Earning rules and tiers over real HTTP and a real PostgreSQL, with the worker's reactions run in-process from the
// inbox the outbox fills: an order earns once per rule however often order.paid is seen, on what the customer paid;
// conditions, autoJoin, cancellation (pending first, TO_ZERO or ALLOW_NEGATIVE), segments, custom events, tiers up and
// down (never down on spending) with their multipliers. After every test the caches equal the ledger and buckets.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { addPoints, createCustomer, createProgram, drainInbox, expectLedgerMatchesCaches, joinMember, member, transactions } from './support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterEach(async () => {
  await drainInbox(service.pool);
  await expectLedgerMatchesCaches(service.pool);
});
afterAll(async () => service?.close());

async function rule(api: ApiClient, programId: string, body: Record<string, unknown>) {
  return api.create(`/api/v1/loyalty/programs/${programId}/earning-rules`, { name: 'rule', trigger: 'ORDER_PAID', ...body });
}

async function paidOrder(api: ApiClient, customerId: string, amount: number, sourceId?: string): Promise<string> {
  const order = await api.create('/api/v1/orders', { amount, currency: 'EUR', customer: { id: customerId }, ...(sourceId ? { sourceId } : {}) });
  const paid = await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' });
  expect(paid.status).toBe(200);
  return order.id;
}

async function memberOf(api: ApiClient, customerId: string) {
  const res = await api.get(`/api/v1/customers/${customerId}/loyalty`);
  return res.body.data[0];
}

async function eventsOf(workspaceId: string, type: string) {
  const { rows } = await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = $2 ORDER BY created_at, id`, [workspaceId, type]);
  return rows.map((r) => r.payload);
}

describe('earning on paid orders', () => {
  it('earns once per order on what the customer paid, however often order.paid is seen, joining the customer', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const r = await rule(api, programId, { points: { type: 'PER_AMOUNT', every: 100, points: 1 } });
    const customerId = await createCustomer(api);
    await api.create('/api/v1/vouchers', { code: 'TENOFF', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1_050 }, currency: 'EUR' });
    const order = await api.create('/api/v1/orders', { sourceId: 'order-1', amount: 10_000, currency: 'EUR', customer: { id: customerId } });
    const redeemed = await api.post('/api/v1/vouchers/TENOFF/redemption', { order: { id: 'order-1', amount: 10_000, currency: 'EUR' }, customer: { id: customerId } });
    expect(redeemed.body.ok, JSON.stringify(redeemed.body)).toBe(true);
    await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' });
    // The same order.paid recorded again (a replay): it reaches the inbox as a second event.
    await service.pool.query(
      `INSERT INTO events (workspace_id, type, payload) SELECT workspace_id, type, payload FROM events WHERE workspace_id = $1 AND type = 'order.paid'`,
      [workspaceId],
    );
    expect(await drainInbox(service.pool)).toBe(2);

    const m = await memberOf(api, customerId);
    // Paid 10,000 − 1,050 = 8,950: floor(8,950 / 100) × 1 = 89.
    expect(m).toMatchObject({ programId, customerId, balance: 89, lifetimeEarned: 89 });
    const entries = await transactions(api, m.id);
    expect(entries).toEqual([expect.objectContaining({ type: 'POINTS_EARNED', amount: 89, orderId: order.id, earningRuleId: r.id, source: { type: 'order', id: order.id } })]);
    expect(await eventsOf(workspaceId, 'loyalty.points.earned')).toEqual([expect.objectContaining({ memberId: m.id, points: 89, orderId: order.id, pending: false })]);
    expect(await eventsOf(workspaceId, 'loyalty.member.created')).toHaveLength(1);
  });

  it('earns for an order created PAID or FULFILLED exactly as for one moved to PAID, and nothing for one created CANCELED', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const r = await rule(api, programId, { points: { type: 'PER_AMOUNT', every: 100, points: 1 } });
    const customerId = await createCustomer(api);
    const create = (amount: number, status: string) => api.create('/api/v1/orders', { amount, currency: 'EUR', customer: { id: customerId }, status });
    const paid = await create(2_500, 'PAID');
    const fulfilled = await create(4_000, 'FULFILLED');
    await create(9_900, 'CANCELED');
    await drainInbox(service.pool);

    const m = await memberOf(api, customerId);
    expect(m).toMatchObject({ programId, balance: 65, lifetimeEarned: 65 });
    const earned = (await transactions(api, m.id)).map((e) => [e.type, e.amount, e.orderId, e.earningRuleId]);
    expect(earned).toEqual(expect.arrayContaining([
      ['POINTS_EARNED', 25, paid.id, r.id],
      ['POINTS_EARNED', 40, fulfilled.id, r.id],
    ]));
    expect(earned).toHaveLength(2);
    expect(await eventsOf(workspaceId, 'loyalty.points.earned')).toHaveLength(2);
  });

  it('earns only where the validation rules hold, and joins no one without autoJoin', async () => {
    const { api } = await service.newWorkspace();
    const bigOrders = await api.create('/api/v1/validation-rules', { name: 'big', conditions: { field: 'order.amount', op: 'gte', value: 5_000 } });
    const programId = await createProgram(api);
    await rule(api, programId, { points: { type: 'FIXED', points: 50 }, validationRuleIds: [bigOrders.id] });
    const closed = await createProgram(api, { autoJoin: false }, 'Closed');
    await rule(api, closed, { points: { type: 'FIXED', points: 7 } });
    const customerId = await createCustomer(api);
    await paidOrder(api, customerId, 4_999);
    await drainInbox(service.pool);
    const joined = (await api.get(`/api/v1/customers/${customerId}/loyalty`)).body.data;
    expect(joined.map((m: any) => [m.programId, m.balance])).toEqual([[programId, 0]]);
    await paidOrder(api, customerId, 5_000);
    await drainInbox(service.pool);
    expect((await memberOf(api, customerId)).balance).toBe(50);
  });
});

describe('reversal of canceled orders', () => {
  it('cancels pending points first, then takes spent points down to 0 (TO_ZERO)', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api, { pending: { days: 14 } });
    await rule(api, programId, { points: { type: 'FIXED', points: 100 } });
    const customerId = await createCustomer(api);
    const orderId = await paidOrder(api, customerId, 1_000);
    await drainInbox(service.pool);
    const m = await memberOf(api, customerId);
    expect(m).toMatchObject({ balance: 0, pendingBalance: 100, lifetimeEarned: 0 });
    await api.patch(`/api/v1/orders/${orderId}`, { status: 'CANCELED' });
    await drainInbox(service.pool);
    expect(await member(api, m.id)).toMatchObject({ balance: 0, pendingBalance: 0, lifetimeEarned: 0 });
    expect((await transactions(api, m.id)).map((e) => [e.type, e.amount, e.pendingAmount])).toEqual([
      ['PENDING_CANCELED', 0, -100],
      ['PENDING_ADDED', 0, 100],
    ]);
    expect(await eventsOf(workspaceId, 'loyalty.points.reversed')).toEqual([expect.objectContaining({ memberId: m.id, points: 0, pendingPoints: 100, orderId })]);

    const active = await createProgram(api, {}, 'Active');
    await rule(api, active, { points: { type: 'FIXED', points: 100 } });
    const other = await createCustomer(api);
    const second = await paidOrder(api, other, 1_000);
    await drainInbox(service.pool);
    const card = (await api.get(`/api/v1/customers/${other}/loyalty`)).body.data.find((x: any) => x.programId === active);
    await addPoints(api, card.id, -70);
    await addPoints(api, card.id, 20);
    await api.patch(`/api/v1/orders/${second}`, { status: 'CANCELED' });
    await drainInbox(service.pool);
    // 30 left of the earning and 20 from elsewhere: the balance stops at 0.
    expect(await member(api, card.id)).toMatchObject({ balance: 0, lifetimeEarned: 0 });
    expect((await transactions(api, card.id))[0]).toMatchObject({ type: 'EARNING_REVERSED', amount: -50, balanceAfter: 0 });
  });

  it('goes below 0 under ALLOW_NEGATIVE, refuses spending then, and pays the debt from the next points', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api, { reversal: { earned: 'ALLOW_NEGATIVE' } });
    await rule(api, programId, { points: { type: 'FIXED', points: 100 } });
    const customerId = await createCustomer(api);
    const orderId = await paidOrder(api, customerId, 1_000);
    await drainInbox(service.pool);
    const m = await memberOf(api, customerId);
    await addPoints(api, m.id, -80);
    await api.patch(`/api/v1/orders/${orderId}`, { status: 'CANCELED' });
    await drainInbox(service.pool);
    expect(await member(api, m.id)).toMatchObject({ balance: -80, lifetimeEarned: 0 });
    expect(await addPoints(api, m.id, -1)).toMatchObject({ ok: false, code: 'loyalty_points_insufficient' });
    await addPoints(api, m.id, 100);
    expect((await member(api, m.id)).balance).toBe(20);
    expect(await addPoints(api, m.id, -20)).toMatchObject({ ok: true });
    // Canceling again reverses nothing more.
    await service.pool.query(`INSERT INTO events (workspace_id, type, payload) SELECT workspace_id, type, payload FROM events WHERE type = 'order.canceled' AND payload->>'orderId' = $1`, [orderId]);
    await drainInbox(service.pool);
    expect((await member(api, m.id)).balance).toBe(0);
  });

  it('earns nothing for an order canceled before its order.paid is reacted to', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    await rule(api, programId, { points: { type: 'FIXED', points: 10 } });
    const customerId = await createCustomer(api);
    const orderId = await paidOrder(api, customerId, 1_000);
    await api.patch(`/api/v1/orders/${orderId}`, { status: 'CANCELED' });
    await drainInbox(service.pool);
    const m = await memberOf(api, customerId);
    expect(m?.balance ?? 0).toBe(0);
  });
});

describe('segments and custom events', () => {
  it('earns once per customer entering a segment, however often it enters', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const segment = await api.create('/api/v1/segments', { name: 'vip', type: 'STATIC' });
    await rule(api, programId, { trigger: 'SEGMENT_ENTERED', segmentId: segment.id, points: { type: 'FIXED', points: 25 } });
    const customerId = await createCustomer(api);
    await api.post(`/api/v1/segments/${segment.id}/members`, { customerIds: [customerId] });
    await api.post(`/api/v1/segments/${segment.id}/members/remove`, { customerIds: [customerId] });
    await api.post(`/api/v1/segments/${segment.id}/members`, { customerIds: [customerId] });
    await drainInbox(service.pool);
    expect((await memberOf(api, customerId)).balance).toBe(25);
  });

  it('earns on each custom event by the rules named after it, idempotent by key', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const review = await rule(api, programId, { trigger: 'CUSTOM_EVENT', eventName: 'review', points: { type: 'FIXED', points: 15 }, limits: { perMember: 2 } });
    const first = await api.post('/api/v1/custom-events', { name: 'review', customer: { sourceId: 'reviewer' }, idempotencyKey: 'ev-1' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ id: expect.any(String), effects: [expect.objectContaining({ type: 'POINTS_EARNED', earningRuleId: review.id, points: 15, programId })] });
    const replay = await api.post('/api/v1/custom-events', { name: 'review', customer: { sourceId: 'reviewer' }, idempotencyKey: 'ev-1' });
    expect(replay.body).toEqual({ ...first.body, idempotent: true });
    await api.post('/api/v1/custom-events', { name: 'review', customer: { sourceId: 'reviewer' } });
    const third = await api.post('/api/v1/custom-events', { name: 'review', customer: { sourceId: 'reviewer' } });
    expect(third.body.effects).toEqual([]);
    const other = await api.post('/api/v1/custom-events', { name: 'signup', customer: { sourceId: 'reviewer' } });
    expect(other.body.effects).toEqual([]);
    expect((await member(api, first.body.effects[0].memberId)).balance).toBe(30);
  });
});

describe('earning rules', () => {
  it('validates, lists, changes and deletes rules', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    expect((await api.post(`/api/v1/loyalty/programs/${programId}/earning-rules`, { name: 'x', trigger: 'SEGMENT_ENTERED', points: { type: 'FIXED', points: 1 } })).status).toBe(400);
    expect((await api.post(`/api/v1/loyalty/programs/${programId}/earning-rules`, { name: 'x', trigger: 'CUSTOM_EVENT', eventName: 'e', points: { type: 'PER_AMOUNT', every: 1, points: 1 } })).status).toBe(400);
    expect((await api.post(`/api/v1/loyalty/programs/${programId}/earning-rules`, { name: 'x', trigger: 'ORDER_PAID', points: { type: 'FIXED', points: 0 } })).status).toBe(400);
    const missingRule = await api.post(`/api/v1/loyalty/programs/${programId}/earning-rules`, { name: 'x', trigger: 'ORDER_PAID', points: { type: 'FIXED', points: 1 }, validationRuleIds: ['00000000-0000-4000-8000-000000000000'] });
    expect(missingRule.status).toBe(400);
    const created = await rule(api, programId, { points: { type: 'FIXED', points: 3 } });
    const changed = await api.patch(`/api/v1/loyalty/earning-rules/${created.id}`, { name: 'renamed', active: false });
    expect(changed.body).toMatchObject({ name: 'renamed', active: false, trigger: 'ORDER_PAID' });
    expect((await api.patch(`/api/v1/loyalty/earning-rules/${created.id}`, { eventName: 'nope' })).status).toBe(400);
    expect((await api.get(`/api/v1/loyalty/programs/${programId}/earning-rules`)).body.data.map((r: any) => r.id)).toEqual([created.id]);
    expect((await api.delete(`/api/v1/loyalty/earning-rules/${created.id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/loyalty/earning-rules/${created.id}`)).status).toBe(404);
  });
});

describe('tiers', () => {
  it('moves members up on earning, never down on spending, down on reversal, and multiplies by the tier', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const silver = await api.create(`/api/v1/loyalty/programs/${programId}/tiers`, { name: 'Silver', minPoints: 100 });
    const gold = await api.create(`/api/v1/loyalty/programs/${programId}/tiers`, { name: 'Gold', minPoints: 350, multiplier: 1.5 });
    expect((await api.post(`/api/v1/loyalty/programs/${programId}/tiers`, { name: 'Dup', minPoints: 350 })).status).toBe(409);
    await rule(api, programId, { points: { type: 'PER_AMOUNT', every: 100, points: 1 } });
    const customerId = await createCustomer(api);

    await paidOrder(api, customerId, 15_000);
    await drainInbox(service.pool);
    let m = await memberOf(api, customerId);
    expect(m).toMatchObject({ balance: 150, lifetimeEarned: 150, tier: { id: silver.id, name: 'Silver' } });
    const big = await paidOrder(api, customerId, 20_000);
    await drainInbox(service.pool);
    m = await member(api, m.id);
    expect(m).toMatchObject({ balance: 350, lifetimeEarned: 350, tier: { id: gold.id } });
    // Gold earns ×1.5: 10,000 paid → 100 × 1.5 = 150.
    await paidOrder(api, customerId, 10_000);
    await drainInbox(service.pool);
    m = await member(api, m.id);
    expect(m).toMatchObject({ balance: 500, lifetimeEarned: 500 });

    await addPoints(api, m.id, -500);
    expect((await member(api, m.id)).tier).toEqual({ id: gold.id, name: 'Gold' });
    await api.patch(`/api/v1/orders/${big}`, { status: 'CANCELED' });
    await drainInbox(service.pool);
    m = await member(api, m.id);
    expect(m).toMatchObject({ balance: 0, lifetimeEarned: 300, tier: { id: silver.id } });

    await api.patch(`/api/v1/loyalty/programs/${programId}/tiers/${silver.id}`, { minPoints: 301 });
    expect((await member(api, m.id)).tier).toBeUndefined();
    await api.delete(`/api/v1/loyalty/programs/${programId}/tiers/${gold.id}`);
    await api.patch(`/api/v1/loyalty/programs/${programId}/tiers/${silver.id}`, { minPoints: 300 });
    expect((await member(api, m.id)).tier).toEqual({ id: silver.id, name: 'Silver' });
    const moves = (await eventsOf(workspaceId, 'loyalty.tier.changed')).map((e) => [e.fromTier?.name ?? null, e.toTier?.name ?? null]);
    expect(moves).toEqual([
      [null, 'Silver'],
      ['Silver', 'Gold'],
      ['Gold', 'Silver'],
      ['Silver', null],
      [null, 'Silver'],
    ]);
    expect((await api.get(`/api/v1/loyalty/programs/${programId}/tiers`)).body.data.map((t: any) => t.name)).toEqual(['Silver']);
  });
});
