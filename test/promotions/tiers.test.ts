// Automatic promotion tiers over real HTTP: CRUD, promotions/validate, tier redemption (outcome shape, idempotency,
// limits), tier entries in stacks beside codes, and tiers invisible to the voucher endpoints.
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

const promotion = (body: Record<string, unknown> = {}) => created<{ id: string }>('/api/v1/campaigns', { name: `promo ${randomUUID().slice(0, 6)}`, type: 'PROMOTION', ...body });
const tier = (campaignId: string, body: Record<string, unknown>) => created<{ id: string; name: string }>(`/api/v1/campaigns/${campaignId}/tiers`, { name: 'tier', discount: { type: 'PERCENT', percentOff: 5 }, ...body });
const cart = (amount: number, items?: unknown[]) => ({ amount, currency: 'USD', ...(items ? { items } : {}) });

describe('tiers: resource', () => {
  it('creates, reads, lists, updates and deletes a tier; only PROMOTION campaigns hold tiers', async () => {
    const campaign = await promotion({ currency: 'USD' });
    const t = await tier(campaign.id, { name: 'Spend 100, get 10%', discount: { type: 'PERCENT', percentOff: 10 }, priority: 3, maxDiscount: 5_000 });
    expect(t).toMatchObject({ campaignId: campaign.id, name: 'Spend 100, get 10%', priority: 3, maxDiscount: 5_000, active: true, redemption: { redeemedCount: 0 } });
    expect((await api.get(`/api/v1/promotions/tiers/${t.id}`)).body).toMatchObject({ id: t.id });
    const list = await api.get(`/api/v1/campaigns/${campaign.id}/tiers`);
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([t.id]);
    const patched = await api.patch(`/api/v1/promotions/tiers/${t.id}`, { active: false, maxDiscount: null });
    expect(patched.body).toMatchObject({ active: false, maxDiscount: null });
    expect((await api.delete(`/api/v1/promotions/tiers/${t.id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/promotions/tiers/${t.id}`)).status).toBe(404);

    const coupons = await created<{ id: string }>('/api/v1/campaigns', { name: 'coupons', type: 'DISCOUNT_COUPONS' });
    const refused = await api.post(`/api/v1/campaigns/${coupons.id}/tiers`, { name: 'x', discount: { type: 'AMOUNT', amountOff: 1 } });
    expect(refused.status).toBe(409);
    const missingRule = await api.post(`/api/v1/campaigns/${campaign.id}/tiers`, { name: 'x', discount: { type: 'AMOUNT', amountOff: 1 }, validationRuleIds: [randomUUID()] });
    expect(missingRule.status).toBe(400);
    expect(missingRule.body.errors[0].path).toBe('body.validationRuleIds');
  });

  it('tiers are not vouchers: the voucher endpoints do not see them', async () => {
    const campaign = await promotion();
    const t = await tier(campaign.id, {});
    const code = `tier:${t.id}`;
    expect([400, 404]).toContain((await api.get(`/api/v1/vouchers/${encodeURIComponent(code)}`)).status);
    expect((await api.post(`/api/v1/vouchers/${encodeURIComponent(code)}/redemption`, { order: cart(1_000) })).body).toMatchObject({ ok: false, code: 'voucher_not_found' });
    const listed = await api.get('/api/v1/vouchers?limit=100');
    expect(listed.body.data.some((v: { code: string }) => v.code === code)).toBe(false);
  });
});

describe('tiers: decisions', () => {
  it('promotions/validate returns the tiers that apply, best first, with their rules and schedule applied', async () => {
    api = (await service.newWorkspace()).api; // every tier of the workspace counts: start from none
    const campaign = await promotion({ currency: 'USD' });
    const over100 = await created<{ id: string }>('/api/v1/validation-rules', { name: 'over 100', conditions: { field: 'order.amount', op: 'gte', value: 10_000 } });
    const small = await tier(campaign.id, { name: '5% always', discount: { type: 'PERCENT', percentOff: 5 } });
    const big = await tier(campaign.id, { name: '15% over 100', discount: { type: 'PERCENT', percentOff: 15 }, validationRuleIds: [over100.id] });
    const notToday = [0, 1, 2, 3, 4, 5, 6].filter((d) => d !== new Date().getUTCDay());
    await tier(campaign.id, { name: 'never today', discount: { type: 'PERCENT', percentOff: 50 }, schedule: { daysOfWeek: notToday } });
    await tier(campaign.id, { name: 'inactive', discount: { type: 'PERCENT', percentOff: 60 }, active: false });

    const res = await api.post('/api/v1/promotions/validate', { order: cart(20_000) });
    expect(res.status).toBe(200);
    expect(res.body.promotions.map((p: { tierId: string }) => p.tierId)).toEqual([big.id, small.id]);
    expect(res.body.promotions[0]).toMatchObject({ kind: 'PROMOTION_TIER', name: '15% over 100', discount: { type: 'PERCENT', amount: 3_000 }, order: { totalAmount: 17_000 } });
    const below = await api.post('/api/v1/promotions/validate', { order: cart(5_000) });
    expect(below.body.promotions.map((p: { tierId: string }) => p.tierId)).toEqual([small.id]);
    const otherCurrency = await api.post('/api/v1/promotions/validate', { order: { amount: 20_000, currency: 'EUR' } });
    expect(otherCurrency.body.promotions).toEqual([]);
  });

  it('redeems a tier with the voucher outcome shape, idempotency, limits and the promotion_tier.redeemed event', async () => {
    const campaign = await promotion();
    const t = await tier(campaign.id, { discount: { type: 'AMOUNT', amountOff: 700 }, redemptionLimit: 1 });
    const key = randomUUID();
    const first = await api.post(`/api/v1/promotions/tiers/${t.id}/redemption`, { order: cart(5_000), idempotencyKey: key });
    expect(first.body).toMatchObject({ ok: true, redemption: { tierId: t.id, amount: 700, status: 'SUCCEEDED' }, order: { discountAmount: 700 } });
    const again = await api.post(`/api/v1/promotions/tiers/${t.id}/redemption`, { order: cart(5_000), idempotencyKey: key });
    expect(again.body).toMatchObject({ ok: true, idempotent: true, redemption: { id: first.body.redemption.id } });
    const conflict = await api.post(`/api/v1/promotions/tiers/${t.id}/redemption`, { order: cart(6_000), idempotencyKey: key });
    expect(conflict.status).toBe(409);
    const limited = await api.post(`/api/v1/promotions/tiers/${t.id}/redemption`, { order: cart(5_000) });
    expect(limited.body).toMatchObject({ ok: false, code: 'redemption_limit_reached' });
    expect((await api.get(`/api/v1/promotions/tiers/${t.id}`)).body.redemption.redeemedCount).toBe(1);
    const unknown = await api.post(`/api/v1/promotions/tiers/${randomUUID()}/redemption`, { order: cart(5_000) });
    expect(unknown.body).toMatchObject({ ok: false, code: 'promotion_tier_not_found' });
    const events = await service.pool.query(`SELECT payload FROM events WHERE type = 'promotion_tier.redeemed' AND payload->>'tierId' = $1`, [t.id]);
    expect(events.rows).toEqual([{ payload: expect.objectContaining({ redemptionId: first.body.redemption.id, tierId: t.id, amount: 700 }) }]);
    // A tier's redemption rolls back like any other.
    const rolled = await api.post(`/api/v1/redemptions/${first.body.redemption.id}/rollback`, {});
    expect(rolled.body).toMatchObject({ ok: true });
    expect((await api.post(`/api/v1/promotions/tiers/${t.id}/redemption`, { order: cart(5_000) })).body.ok).toBe(true);
  });

  it('a stack takes { tierId } entries beside codes, under the same priority, exclusivity and atomicity', async () => {
    const campaign = await promotion();
    const t = await tier(campaign.id, { discount: { type: 'PERCENT', percentOff: 10 }, priority: 10 });
    const voucher = await created<{ code: string }>('/api/v1/vouchers', { code: `S-${randomUUID().slice(0, 8)}`, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1_000 }, currency: 'USD' });
    const res = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: voucher.code }, { tierId: t.id }], order: cart(10_000), idempotencyKey: randomUUID() });
    expect(res.body).toMatchObject({
      ok: true,
      results: [
        { voucherCode: voucher.code, ok: true, amount: 1_000, priority: 0 },
        // Evaluated first (priority 10): 10% of the whole 10,000, not of what the voucher would have left.
        { tierId: t.id, ok: true, amount: 1_000, priority: 10 },
      ],
      order: { discountAmount: 2_000 },
    });
    const exclusive = await tier(campaign.id, { discount: { type: 'AMOUNT', amountOff: 1 }, exclusive: true });
    const refused = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: voucher.code }, { tierId: exclusive.id }], order: cart(10_000), idempotencyKey: randomUUID() });
    expect(refused.body).toMatchObject({ ok: false, code: 'exclusive_conflict', results: [{ voucherCode: voucher.code, code: 'skipped' }, { tierId: exclusive.id, code: 'exclusive_conflict' }] });
    const missing = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: voucher.code }, { tierId: randomUUID() }], order: cart(10_000), idempotencyKey: randomUUID() });
    expect(missing.body).toMatchObject({ ok: false, code: 'promotion_tier_not_found' });
    const both = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: voucher.code, tierId: t.id }], order: cart(10_000), idempotencyKey: randomUUID() });
    expect(both.status).toBe(400);
    // A tier id is not a voucher code: the same tier cannot be smuggled in as a code entry.
    const asCode = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: `tier:${t.id}` }], order: cart(10_000), idempotencyKey: randomUUID() });
    expect(asCode.status).toBe(400);
  });
});
