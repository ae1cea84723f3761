import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

const template = {
  type: 'DISCOUNT',
  discount: { type: 'PERCENT', percentOff: 15, amountLimit: 2000 },
  currency: 'EUR',
  redemptionLimit: 100,
  codeConfig: { prefix: 'SUMMER-', length: 6 },
};

describe('campaigns: happy path', () => {
  it('creates a campaign with defaults, reads it back and finds it in the list', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/campaigns', { name: 'Summer sale', type: 'DISCOUNT_COUPONS' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Summer sale',
      type: 'DISCOUNT_COUPONS',
      active: true,
      startDate: null,
      expirationDate: null,
      priority: 0,
      exclusive: false,
      currency: null,
      voucher: null,
      validationRuleIds: [],
      metadata: {},
    });
    expect(created.body.createdAt).toBe(created.body.updatedAt);

    const fetched = await api.get(`/api/v1/campaigns/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);

    const list = await api.get('/api/v1/campaigns');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([created.body]);
  });

  it('keeps every field given at creation, the voucher template included', async () => {
    const { api } = await service.newWorkspace();
    const ruleId = randomUUID();
    const body = {
      name: 'Black Friday',
      type: 'PROMOTION',
      active: false,
      startDate: '2026-11-27T00:00:00.000Z',
      expirationDate: '2026-11-30T23:59:59.000Z',
      priority: 7,
      exclusive: true,
      currency: 'USD',
      voucher: template,
      validationRuleIds: [ruleId],
      metadata: { channel: 'web', tier: 2 },
    };
    const created = await api.post('/api/v1/campaigns', body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(body);
  });

  it('updates only the fields sent, clears a date with null and keeps the type', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/campaigns', {
      name: 'Winter',
      type: 'GIFT_VOUCHERS',
      startDate: '2026-12-01T00:00:00.000Z',
      metadata: { a: 1 },
    });
    const updated = await api.patch(`/api/v1/campaigns/${created.body.id}`, {
      name: 'Winter 2026',
      startDate: null,
      priority: 3,
      voucher: { gift: { amount: 5000, currency: 'EUR' } },
      type: 'GIFT_VOUCHERS',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: created.body.id,
      name: 'Winter 2026',
      type: 'GIFT_VOUCHERS',
      startDate: null,
      priority: 3,
      exclusive: false,
      metadata: { a: 1 },
      voucher: { gift: { amount: 5000, currency: 'EUR' } },
    });
    expect(Date.parse(updated.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));
    expect((await api.get(`/api/v1/campaigns/${created.body.id}`)).body).toEqual(updated.body);
  });

  it('deletes a campaign together with its vouchers', async () => {
    const { api } = await service.newWorkspace();
    const campaign = await api.post('/api/v1/campaigns', { name: 'Gone', type: 'DISCOUNT_COUPONS', voucher: template });
    const voucher = await api.post('/api/v1/vouchers', { campaignId: campaign.body.id, code: 'GONE-1' });
    expect(voucher.status).toBe(201);

    const deleted = await api.delete(`/api/v1/campaigns/${campaign.body.id}`);
    expect(deleted.status).toBe(204);
    expect((await api.get(`/api/v1/campaigns/${campaign.body.id}`)).status).toBe(404);
    expect((await api.get('/api/v1/vouchers/GONE-1')).status).toBe(404);
  });

  it('pages through campaigns newest first with next and prev cursors', async () => {
    const { api } = await service.newWorkspace();
    const names = ['one', 'two', 'three'];
    for (const name of names) await api.post('/api/v1/campaigns', { name, type: 'PROMOTION' });
    const first = await api.get('/api/v1/campaigns?limit=2');
    expect(first.body.data.map((c: { name: string }) => c.name)).toEqual(['three', 'two']);
    expect(first.body.prev).toBeUndefined();
    const second = await api.get(`/api/v1/campaigns?limit=2&cursor=${first.body.next}`);
    expect(second.body.data.map((c: { name: string }) => c.name)).toEqual(['one']);
    expect(second.body.next).toBeUndefined();
    const back = await api.get(`/api/v1/campaigns?limit=2&cursor=${second.body.prev}`);
    expect(back.body.data.map((c: { name: string }) => c.name)).toEqual(['three', 'two']);
  });
});

describe('campaigns: errors', () => {
  it('refuses a campaign without a name or with an unknown type, naming the fields', async () => {
    const { api } = await service.newWorkspace();
    const res = await api.post('/api/v1/campaigns', { type: 'NEWSLETTER' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.code).toBe('invalid_request');
    const paths = res.body.errors.map((e: { path: string }) => e.path).join(' ');
    expect(paths).toContain('name');
    expect(paths).toContain('type');
  });

  it('refuses an expirationDate before the startDate, at creation and by update', async () => {
    const { api } = await service.newWorkspace();
    const bad = await api.post('/api/v1/campaigns', {
      name: 'Backwards',
      type: 'PROMOTION',
      startDate: '2026-12-01T00:00:00.000Z',
      expirationDate: '2026-11-01T00:00:00.000Z',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ path: 'body.expirationDate' })]);

    const created = await api.post('/api/v1/campaigns', { name: 'Later', type: 'PROMOTION', startDate: '2026-12-01T00:00:00.000Z' });
    const update = await api.patch(`/api/v1/campaigns/${created.body.id}`, { expirationDate: '2026-11-01T00:00:00.000Z' });
    expect(update.status).toBe(400);
    expect(update.body.errors).toEqual([expect.objectContaining({ path: 'body.expirationDate' })]);
    expect((await api.get(`/api/v1/campaigns/${created.body.id}`)).body.expirationDate).toBeNull();
  });

  it('refuses to change the type of a campaign', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/campaigns', { name: 'Fixed', type: 'DISCOUNT_COUPONS' });
    const res = await api.patch(`/api/v1/campaigns/${created.body.id}`, { type: 'GIFT_VOUCHERS' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'body.type' })]);
    expect((await api.get(`/api/v1/campaigns/${created.body.id}`)).body.type).toBe('DISCOUNT_COUPONS');
  });

  it('refuses an inconsistent voucher template', async () => {
    const { api } = await service.newWorkspace();
    const giftOnDiscount = await api.post('/api/v1/campaigns', {
      name: 'Mixed',
      type: 'DISCOUNT_COUPONS',
      voucher: { type: 'DISCOUNT', gift: { amount: 100, currency: 'EUR' } },
    });
    expect(giftOnDiscount.status).toBe(400);
    const badPercent = await api.post('/api/v1/campaigns', {
      name: 'Too much',
      type: 'DISCOUNT_COUPONS',
      voucher: { discount: { type: 'PERCENT', percentOff: 150 } },
    });
    expect(badPercent.status).toBe(400);
    expect(badPercent.body.errors.length).toBeGreaterThan(0);
  });

  it('answers 404 for a missing campaign on get, update and delete, and 400 for a malformed id', async () => {
    const { api } = await service.newWorkspace();
    const id = randomUUID();
    expect((await api.get(`/api/v1/campaigns/${id}`)).status).toBe(404);
    expect((await api.patch(`/api/v1/campaigns/${id}`, { name: 'x' })).status).toBe(404);
    expect((await api.patch(`/api/v1/campaigns/${id}`, { type: 'PROMOTION' })).status).toBe(404);
    expect((await api.delete(`/api/v1/campaigns/${id}`)).status).toBe(404);
    expect((await api.get('/api/v1/campaigns/not-a-uuid')).status).toBe(400);
  });

  it('refuses a list cursor the server did not issue', async () => {
    const { api } = await service.newWorkspace();
    const res = await api.get('/api/v1/campaigns?cursor=forged');
    expect(res.status).toBe(400);
  });
});

describe('campaigns: security', () => {
  it('lets a campaigns:read key list campaigns but not create one', async () => {
    const { api } = await service.newWorkspace(['campaigns:read']);
    const create = await api.post('/api/v1/campaigns', { name: 'Nope', type: 'PROMOTION' });
    expect(create.status).toBe(403);
    expect(create.body.code).toBe('forbidden');
    expect((await api.get('/api/v1/campaigns')).status).toBe(200);
  });

  it('answers 401 without a key', async () => {
    expect((await service.api().get('/api/v1/campaigns')).status).toBe(401);
  });

  it("answers another workspace's campaign exactly as a missing one", async () => {
    const owner = await service.newWorkspace();
    const stranger = await service.newWorkspace();
    const campaign = await owner.api.post('/api/v1/campaigns', { name: 'Private', type: 'PROMOTION' });
    const foreign = await stranger.api.get(`/api/v1/campaigns/${campaign.body.id}`);
    const missing = await stranger.api.get(`/api/v1/campaigns/${randomUUID()}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await stranger.api.patch(`/api/v1/campaigns/${campaign.body.id}`, { name: 'Mine' })).status).toBe(404);
    expect((await stranger.api.delete(`/api/v1/campaigns/${campaign.body.id}`)).status).toBe(404);
    expect((await stranger.api.get('/api/v1/campaigns')).body.data).toEqual([]);
    expect((await owner.api.get(`/api/v1/campaigns/${campaign.body.id}`)).body.name).toBe('Private');
  });
});
