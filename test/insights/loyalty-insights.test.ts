// GET /insights/loyalty over real HTTP and PostgreSQL: the points moved in the range by kind and per period (from the
// rollup the ledger's trigger keeps, checked against the ledger itself), and pending, outstanding and tiers now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepPoints } from '../../src/domains/loyalty/index.js';
import type { Pool } from '../../src/platform/database.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { addPoints, createCustomer, drainInbox, joinMember, makeDue } from '../loyalty/support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

const HOUR = 3_600_000;

/** The same figures summed from the ledger, by the rollup's rules: what the rollup must always equal. */
async function ledgerFigures(pool: Pool, workspaceId: string) {
  const { rows } = await pool.query(
    `SELECT coalesce(sum(amount + pending_amount) FILTER (WHERE type IN ('POINTS_EARNED', 'PENDING_ADDED')), 0)::int AS earned,
            coalesce(sum(-amount) FILTER (WHERE type IN ('REDEMPTION', 'REWARD_REDEMPTION')), 0)::int AS spent,
            coalesce(sum(amount) FILTER (WHERE type IN ('ROLLBACK', 'REWARD_REFUND')), 0)::int AS refunded,
            coalesce(sum(-amount) FILTER (WHERE type = 'POINTS_EXPIRED'), 0)::int AS expired,
            coalesce(sum(-amount - pending_amount) FILTER (WHERE type IN ('EARNING_REVERSED', 'PENDING_CANCELED')), 0)::int AS reversed,
            coalesce(sum(amount + pending_amount) FILTER (WHERE type = 'ADJUSTMENT'), 0)::int AS adjusted
       FROM loyalty_ledger_entries WHERE workspace_id = $1`,
    [workspaceId],
  );
  return rows[0];
}

async function loyaltyProgram(api: ApiClient, loyalty: Record<string, unknown>, name = 'Club') {
  return api.create('/api/v1/campaigns', { name, type: 'LOYALTY_PROGRAM', currency: 'EUR', loyalty });
}

describe('loyalty insights: figures', () => {
  it('sums the points moved by kind and per day, and counts pending, outstanding and members per tier now', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const program = await loyaltyProgram(api, { payWithPoints: { pointValue: { points: 1, amount: 1 } } });
    const gold = await api.create(`/api/v1/loyalty/programs/${program.id}/tiers`, { name: 'Gold', minPoints: 100 });
    const platinum = await api.create(`/api/v1/loyalty/programs/${program.id}/tiers`, { name: 'Platinum', minPoints: 10_000 });
    await api.create(`/api/v1/loyalty/programs/${program.id}/earning-rules`, { name: 'review', trigger: 'CUSTOM_EVENT', eventName: 'review', points: { type: 'FIXED', points: 150 } });
    const ada = await joinMember(api, program.id, await createCustomer(api, 'ada'));
    const bo = await joinMember(api, program.id, await createCustomer(api, 'bo'));
    await joinMember(api, program.id);
    expect((await api.post('/api/v1/custom-events', { name: 'review', customer: { sourceId: 'ada' } })).status).toBe(200);
    const paid = await api.post(`/api/v1/vouchers/${ada.code}/redemption`, { order: { amount: 40, currency: 'EUR' } });
    expect(paid.body).toMatchObject({ ok: true, redemption: { points: 40 } });
    await api.post(`/api/v1/redemptions/${paid.body.redemption.id}/rollback`, {});
    await api.post(`/api/v1/vouchers/${ada.code}/redemption`, { order: { amount: 30, currency: 'EUR' } });
    await addPoints(api, bo.id, 20, { expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
    await makeDue(service.pool, bo.id, 'expires_at');
    await sweepPoints(service.pool);
    await addPoints(api, bo.id, 5);
    await addPoints(api, bo.id, 7, { activatesAt: new Date(Date.now() + 86_400_000).toISOString() });

    const figures = await api.get(`/api/v1/insights/loyalty?programId=${program.id}`);
    expect(figures.status).toBe(200);
    const points = { earned: 150, spent: 70, refunded: 40, expired: 20, reversed: 0, adjusted: 32 };
    expect(figures.body).toEqual({
      points,
      periods: [{ period: expect.any(String), ...points }],
      pending: 7,
      outstanding: 125,
      members: 3,
      tiers: [
        { tierId: null, name: null, programId: null, minPoints: null, members: 2 },
        { tierId: gold.id, name: 'Gold', programId: program.id, minPoints: 100, members: 1 },
        { tierId: platinum.id, name: 'Platinum', programId: program.id, minPoints: 10_000, members: 0 },
      ],
    });
    const today = new Date(new Date().setUTCHours(0, 0, 0, 0)).toISOString();
    expect(figures.body.periods[0].period).toBe(today);
    expect(figures.body.points).toEqual(await ledgerFigures(service.pool, workspaceId));
  });

  it('counts pending points when granted and takes them back as reversed when their order is canceled', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const program = await loyaltyProgram(api, { pending: { days: 14 } });
    await api.create(`/api/v1/loyalty/programs/${program.id}/earning-rules`, { name: 'paid', trigger: 'ORDER_PAID', points: { type: 'FIXED', points: 100 } });
    const customerId = await createCustomer(api);
    const order = await api.create('/api/v1/orders', { amount: 1_000, currency: 'EUR', customer: { id: customerId } });
    expect((await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' })).status).toBe(200);
    await drainInbox(service.pool);
    expect((await api.get('/api/v1/insights/loyalty')).body).toMatchObject({ points: { earned: 100, reversed: 0 }, pending: 100, outstanding: 0, members: 1 });
    expect((await api.patch(`/api/v1/orders/${order.id}`, { status: 'CANCELED' })).status).toBe(200);
    await drainInbox(service.pool);
    // Another question than the cached one above, so the answer is fresh.
    const after = await api.get(`/api/v1/insights/loyalty?programId=${program.id}`);
    expect(after.body).toMatchObject({ points: { earned: 100, reversed: 100 }, pending: 0, outstanding: 0, members: 1 });
    expect(after.body.points).toEqual(await ledgerFigures(service.pool, workspaceId));
  });

  it('counts only the periods of the range, by hour in a half-hour zone', async () => {
    const { api } = await service.newWorkspace();
    expect((await api.patch('/api/v1/workspace', { timeZone: 'Asia/Kolkata' })).status).toBe(200);
    const program = await loyaltyProgram(api, {});
    const ada = await joinMember(api, program.id);
    await addPoints(api, ada.id, 10);
    const { rows } = await service.pool.query<{ at: Date }>(`SELECT created_at AS at FROM loyalty_ledger_entries WHERE member_id = $1`, [ada.id]);
    const at = rows[0]!.at.getTime();
    // Kolkata is UTC+5:30: its hours start at :30 past the UTC hour.
    const hourStart = Math.floor((at - 30 * 60_000) / HOUR) * HOUR + 30 * 60_000;
    const byHour = await api.get(`/api/v1/insights/loyalty?interval=hour&from=${new Date(at - 2 * HOUR).toISOString()}&to=${new Date(at + 2 * HOUR).toISOString()}`);
    expect(byHour.status).toBe(200);
    expect(byHour.body.periods).toEqual([{ period: new Date(hourStart).toISOString(), earned: 0, spent: 0, refunded: 0, expired: 0, reversed: 0, adjusted: 10 }]);
    const before = await api.get(`/api/v1/insights/loyalty?interval=hour&from=${new Date(hourStart - 5 * HOUR).toISOString()}&to=${new Date(hourStart).toISOString()}`);
    expect(before.body).toMatchObject({ points: { adjusted: 0 }, periods: [], outstanding: 10 });
    const after = await api.get(`/api/v1/insights/loyalty?from=${new Date(hourStart + HOUR).toISOString()}&to=${new Date(hourStart + 3 * HOUR).toISOString()}&interval=hour`);
    expect(after.body).toMatchObject({ points: { adjusted: 0 }, periods: [] });
  });

  it('stays equal to the ledger under 60 concurrent point changes on 6 cards, and commits or rolls back with the entry', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const program = await loyaltyProgram(api, {});
    const members = await Promise.all(Array.from({ length: 6 }, () => joinMember(api, program.id)));
    const changes = Array.from({ length: 60 }, (_, i) => ({ member: members[i % 6]!, points: i % 3 === 2 ? -7 : 11 + i }));
    const answers = await Promise.all(changes.map((c) => api.post(`/api/v1/loyalty/members/${c.member.id}/points`, { points: c.points })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const ledger = await ledgerFigures(service.pool, workspaceId);
    expect(ledger.adjusted).not.toBe(0);
    expect((await api.get('/api/v1/insights/loyalty')).body.points).toEqual(ledger);

    // A ledger write undone by its transaction leaves the rollup as it was.
    const client = await service.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT * FROM loyalty_grant($1, $2, 1000, 'POINTS_EARNED', NULL, NULL, 'api', NULL, NULL, NULL, NULL)`, [workspaceId, members[0]!.id]);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect((await api.get(`/api/v1/insights/loyalty?programId=${program.id}`)).body.points).toEqual(ledger);
  });
});

describe('loyalty insights: bad requests', () => {
  it.each([
    ['from after to', '/insights/loyalty?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'query.from'],
    ['days over more than 366 days', '/insights/loyalty?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'query.to'],
    ['hours over more than 31 days', '/insights/loyalty?interval=hour&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:01Z', 'query.to'],
    ['an interval of a week', '/insights/loyalty?interval=week', undefined],
    ['a program id that is no uuid', '/insights/loyalty?programId=club', undefined],
    ['a timestamp that is not one', '/insights/loyalty?to=tomorrow', undefined],
  ])('answers 400 for %s', async (_label, path, errorPath) => {
    const { api } = await service.newWorkspace();
    const res = await api.get(`/api/v1${path}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    if (errorPath) expect(res.body.errors?.[0]?.path).toBe(errorPath);
  });

  it('answers zeros for a workspace without programs, and for a campaign id that is not a loyalty program', async () => {
    const { api } = await service.newWorkspace();
    const sale = await api.create('/api/v1/campaigns', { name: 'Sale', type: 'DISCOUNT_COUPONS' });
    const empty = { points: { earned: 0, spent: 0, refunded: 0, expired: 0, reversed: 0, adjusted: 0 }, periods: [], pending: 0, outstanding: 0, members: 0 };
    expect((await api.get('/api/v1/insights/loyalty')).body).toMatchObject(empty);
    const program = await loyaltyProgram(api, {});
    await addPoints(api, (await joinMember(api, program.id)).id, 9);
    expect((await api.get(`/api/v1/insights/loyalty?programId=${sale.id}&interval=hour`)).body).toMatchObject(empty);
    expect((await api.get('/api/v1/insights/loyalty?interval=hour')).body).toMatchObject({ points: { adjusted: 9 }, outstanding: 9, members: 1 });
    expect((await api.post('/api/rpc/insights.loyalty', { interval: 'hour' })).status).toBe(200);
  });
});

describe('loyalty insights: security', () => {
  it('needs insights:read', async () => {
    const { api: reader } = await service.newWorkspace(['loyalty:read']);
    const refused = await reader.get('/api/v1/insights/loyalty');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
    expect((await service.api().get('/api/v1/insights/loyalty')).status).toBe(401);
  });

  it("never counts another workspace's points, even asked with its program id", async () => {
    const a = await service.newWorkspace();
    const b = await service.newWorkspace();
    const program = await loyaltyProgram(a.api, {});
    const m = await joinMember(a.api, program.id);
    await addPoints(a.api, m.id, 40);
    expect((await a.api.get(`/api/v1/insights/loyalty?programId=${program.id}`)).body).toMatchObject({ points: { adjusted: 40 }, outstanding: 40, members: 1 });
    const foreign = await b.api.get(`/api/v1/insights/loyalty?programId=${program.id}`);
    expect(foreign.status).toBe(200);
    expect(foreign.body).toMatchObject({ points: { adjusted: 0 }, periods: [], outstanding: 0, members: 0 });
    expect((await b.api.get('/api/v1/insights/loyalty')).body).toMatchObject({ points: { adjusted: 0 }, members: 0 });
  });
});
