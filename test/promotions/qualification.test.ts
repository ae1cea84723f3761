// Qualification over real HTTP: tiers, the customer's own vouchers and gift cards, ranked best deal first; scopes;
// live counts (a used-up tier drops out at once, though the index is not rebuilt for counters).
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

describe('qualification', () => {
  it("ranks tiers, the customer's vouchers and gift cards best first; scopes and limit select", async () => {
    const customer = await created<{ id: string }>('/api/v1/customers', { sourceId: `q-${randomUUID()}` });
    const other = await created<{ id: string }>('/api/v1/customers', { sourceId: `o-${randomUUID()}` });
    const campaign = await created<{ id: string }>('/api/v1/campaigns', { name: 'auto', type: 'PROMOTION' });
    const shoes = await created<{ id: string }>('/api/v1/validation-rules', { name: 'shoes in cart', conditions: { field: 'order.items.productId', op: 'contains', value: 'shoes' } });
    const t10 = await created<{ id: string }>(`/api/v1/campaigns/${campaign.id}/tiers`, { name: '10% shoes', discount: { type: 'PERCENT', percentOff: 10 }, validationRuleIds: [shoes.id] });
    const t3 = await created<{ id: string }>(`/api/v1/campaigns/${campaign.id}/tiers`, { name: '3 off', discount: { type: 'AMOUNT', amountOff: 300 } });
    await created(`/api/v1/campaigns/${campaign.id}/tiers`, { name: 'hats only', discount: { type: 'PERCENT', percentOff: 50 }, validationRuleIds: [(await created<{ id: string }>('/api/v1/validation-rules', { name: 'hats', conditions: { field: 'order.items.productId', op: 'contains', value: 'hats' } })).id] });
    const mine = await created<{ code: string }>('/api/v1/vouchers', { code: `Q-${randomUUID().slice(0, 8)}`, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, currency: 'EUR', customerId: customer.id });
    const gift = await created<{ code: string }>('/api/v1/vouchers', { code: `G-${randomUUID().slice(0, 8)}`, type: 'GIFT_CARD', gift: { amount: 2_500, currency: 'EUR' }, customerId: customer.id });
    await created('/api/v1/vouchers', { code: `X-${randomUUID().slice(0, 8)}`, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 900 }, currency: 'EUR', customerId: other.id });

    const order = { amount: 10_000, currency: 'EUR', items: [{ productId: 'shoes', quantity: 1, price: 10_000 }] };
    const all = await api.post('/api/v1/qualifications', { order, customer: { id: customer.id } });
    expect(all.status).toBe(200);
    expect(all.body.data.map((o: { kind: string; tierId?: string; code?: string; discount: { amount: number } }) => [o.kind, o.tierId ?? o.code, o.discount.amount])).toEqual([
      ['GIFT_CARD', gift.code, 2_500],
      ['PROMOTION_TIER', t10.id, 1_000],
      ['VOUCHER', mine.code, 500],
      ['PROMOTION_TIER', t3.id, 300],
    ]);
    const automatic = await api.post('/api/v1/qualifications', { order, customer: { id: customer.id }, scope: 'AUTOMATIC' });
    expect(automatic.body.data.map((o: { kind: string }) => o.kind)).toEqual(['PROMOTION_TIER', 'PROMOTION_TIER']);
    const own = await api.post('/api/v1/qualifications', { order, customer: { id: customer.id }, scope: 'CUSTOMER_VOUCHERS', limit: 1 });
    expect(own.body.data).toHaveLength(1);
    expect(own.body.data[0]).toMatchObject({ kind: 'GIFT_CARD', code: gift.code });
    const anonymous = await api.post('/api/v1/qualifications', { order });
    expect(anonymous.body.data.map((o: { tierId: string }) => o.tierId)).toEqual([t10.id, t3.id]);
    expect((await api.post('/api/v1/qualifications', { order, customer: { id: randomUUID() } })).status).toBe(404);
  });

  it('a tier used up a moment ago is not offered (live counts), and a new tier is offered at once', async () => {
    api = (await service.newWorkspace()).api;
    const campaign = await created<{ id: string }>('/api/v1/campaigns', { name: 'once', type: 'PROMOTION', currency: 'PLN' });
    const once = await created<{ id: string }>(`/api/v1/campaigns/${campaign.id}/tiers`, { name: 'first buyer', discount: { type: 'AMOUNT', amountOff: 100 }, redemptionLimit: 1 });
    const order = { amount: 1_000, currency: 'PLN' };
    expect((await api.post('/api/v1/qualifications', { order })).body.data.map((o: { tierId: string }) => o.tierId)).toEqual([once.id]);
    expect((await api.post(`/api/v1/promotions/tiers/${once.id}/redemption`, { order })).body.ok).toBe(true);
    expect((await api.post('/api/v1/qualifications', { order })).body.data).toEqual([]);
    const fresh = await created<{ id: string }>(`/api/v1/campaigns/${campaign.id}/tiers`, { name: 'new', discount: { type: 'AMOUNT', amountOff: 50 } });
    expect((await api.post('/api/v1/qualifications', { order })).body.data.map((o: { tierId: string }) => o.tierId)).toEqual([fresh.id]);
  });
});
