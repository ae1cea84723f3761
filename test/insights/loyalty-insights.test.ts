// GET /insights/loyalty over real HTTP and PostgreSQL: the ledger's movements of the range by kind (earned, spent,
// refunded, expired, reversed, adjusted), and pending points, outstanding points and members per tier now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepPoints } from '../../src/domains/loyalty/index.js';
import { startTestService, type TestService } from '../support/service.js';
import { addPoints, createCustomer, joinMember, makeDue } from '../loyalty/support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

describe('loyalty insights', () => {
  it('sums the ledger of the range by movement, and counts pending, outstanding and members per tier now', async () => {
    const { api } = await service.newWorkspace();
    const program = await api.create('/api/v1/campaigns', { name: 'Club', type: 'LOYALTY_PROGRAM', currency: 'EUR', loyalty: { payWithPoints: { pointValue: { points: 1, amount: 1 } } } });
    const gold = await api.create(`/api/v1/loyalty/programs/${program.id}/tiers`, { name: 'Gold', minPoints: 100 });
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

    const figures = await api.get(`/api/v1/insights/loyalty?programId=${program.id}`);
    expect(figures.status).toBe(200);
    expect(figures.body).toEqual({
      points: { earned: 150, spent: 70, refunded: 40, expired: 20, reversed: 0, adjusted: 25 },
      pending: 0,
      outstanding: 125,
      members: 3,
      tiers: [
        { tierId: null, name: null, members: 2 },
        { tierId: gold.id, name: 'Gold', members: 1 },
      ],
    });
    expect((await api.get('/api/v1/insights/loyalty?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400);
    const { api: reader } = await service.newWorkspace(['loyalty:read']);
    expect((await reader.get('/api/v1/insights/loyalty')).status).toBe(403);
  });
});
