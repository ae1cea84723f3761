import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

async function createCampaign(api: ApiClient, body: Record<string, unknown>): Promise<string> {
  const res = await api.post('/api/v1/campaigns', { name: 'Bulk', type: 'DISCOUNT_COUPONS', ...body });
  expect(res.status).toBe(201);
  return res.body.id;
}

const discountTemplate = { discount: { type: 'PERCENT', percentOff: 20 }, redemptionLimit: 1, metadata: { batch: 'spring' } };

describe('voucher generation: happy path', () => {
  it('creates 5,000 unique vouchers in one call, every code matching prefix, pattern, postfix and charset', async () => {
    const { workspaceId, api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: discountTemplate });
    const res = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, {
      count: 5000,
      codeConfig: { prefix: 'SPRING-', postfix: '-26', pattern: '####-####', charset: 'alphabetic_uppercase' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ campaignId, count: 5000 });
    expect(res.body.codes).toHaveLength(5000);
    expect(new Set(res.body.codes).size).toBe(5000);
    for (const code of res.body.codes) expect(code).toMatch(/^SPRING-[A-Z]{4}-[A-Z]{4}-26$/);
    const { rows } = await service.pool.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM vouchers WHERE workspace_id = $1 AND campaign_id = $2',
      [workspaceId, campaignId],
    );
    expect(rows[0]!.count).toBe(5000);
  });

  it('copies the campaign template into every generated voucher', async () => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: { ...discountTemplate, priority: 4, codeConfig: { prefix: 'T-' } } });
    const res = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 3 });
    expect(res.status).toBe(201);
    for (const code of res.body.codes) {
      expect(code).toMatch(/^T-[A-HJ-NP-Z2-9]{8}$/);
      const voucher = await api.get(`/api/v1/vouchers/${code}`);
      expect(voucher.body).toMatchObject({
        code,
        campaignId,
        type: 'DISCOUNT',
        discount: { type: 'PERCENT', percentOff: 20 },
        redemption: { limit: 1, redeemedCount: 0 },
        priority: 4,
        active: true,
        metadata: { batch: 'spring' },
      });
    }
  });

  it('lets the request codeConfig override the template one field by field', async () => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, {
      voucher: { ...discountTemplate, codeConfig: { prefix: 'TPL-', postfix: '-END', length: 4, charset: 'numbers' } },
    });
    const res = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 20, codeConfig: { length: 10 } });
    expect(res.status).toBe(201);
    for (const code of res.body.codes) expect(code).toMatch(/^TPL-\d{10}-END$/);
  });

  it('generates gift cards whose ledgers sum to their balances', async () => {
    const { workspaceId, api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { type: 'GIFT_VOUCHERS', voucher: { gift: { amount: 2500, currency: 'EUR' } } });
    const res = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 200 });
    expect(res.status).toBe(201);
    const { rows } = await service.pool.query<{ cards: number; mismatched: number; entries: number }>(
      `SELECT count(*)::int AS cards,
              count(*) FILTER (WHERE v.gift_balance <> l.total OR v.gift_amount <> 2500)::int AS mismatched,
              sum(l.entries)::int AS entries
       FROM vouchers v
       JOIN (SELECT voucher_id, sum(amount) AS total, count(*) AS entries FROM gift_ledger_entries
             WHERE type = 'CREDITS_ADDED' GROUP BY voucher_id) l ON l.voucher_id = v.id
       WHERE v.workspace_id = $1 AND v.type = 'GIFT_CARD'`,
      [workspaceId],
    );
    expect(rows[0]).toEqual({ cards: 200, mismatched: 0, entries: 200 });
  });

  it('skips codes that exist already and still delivers the count asked for', async () => {
    const { workspaceId, api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: discountTemplate });
    const config = { charset: 'numbers', length: 2 };
    const first = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 50, codeConfig: config });
    const second = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 50, codeConfig: config });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(new Set([...first.body.codes, ...second.body.codes]).size).toBe(100);
    const { rows } = await service.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM vouchers WHERE workspace_id = $1', [workspaceId]);
    expect(rows[0]!.count).toBe(100);
  });

  it('keeps codes unique when generations into one crowded code space race each other', async () => {
    const { workspaceId, api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: discountTemplate });
    // 4 x 1,500 codes drawn from 10,000 four-digit codes: the racing transactions must collide and redraw.
    const config = { charset: 'numbers', length: 4 };
    const results = await Promise.all(
      Array.from({ length: 4 }, () => api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 1500, codeConfig: config })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    const all = results.flatMap((r) => r.body.codes as string[]);
    expect(new Set(all).size).toBe(6000);
    const { rows } = await service.pool.query<{ count: number; distinct: number }>(
      'SELECT count(*)::int AS count, count(DISTINCT code)::int AS distinct FROM vouchers WHERE workspace_id = $1',
      [workspaceId],
    );
    expect(rows[0]).toEqual({ count: 6000, distinct: 6000 });
  });
});

describe('voucher generation: errors', () => {
  it('refuses a code space smaller than twice the count with 400 and a clear message', async () => {
    const { workspaceId, api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: discountTemplate });
    const res = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 60, codeConfig: { charset: 'numbers', length: 2 } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.detail).toMatch(/code space holds 100 codes/);
    const { rows } = await service.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM vouchers WHERE workspace_id = $1', [workspaceId]);
    expect(rows[0]!.count).toBe(0);
  });

  it('answers 409 when the code space is used up, creating nothing', async () => {
    const { workspaceId, api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: discountTemplate });
    const config = { charset: 'AB', length: 3 };
    expect((await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 4, codeConfig: config })).status).toBe(201);
    expect((await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 4, codeConfig: config })).status).toBe(201);
    const full = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 1, codeConfig: config });
    expect(full.status).toBe(409);
    expect(full.body.code).toBe('conflict');
    const { rows } = await service.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM vouchers WHERE workspace_id = $1', [workspaceId]);
    expect(rows[0]!.count).toBe(8);
  });

  it('refuses a campaign whose template lacks what its vouchers need', async () => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, {});
    const res = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 5 });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'campaign.voucher.discount' })]);
  });

  it.each([
    ['a count of 0', { count: 0 }],
    ['a count above 100,000', { count: 100_001 }],
    ['a length of 65', { count: 1, codeConfig: { length: 65 } }],
    ['a pattern without #', { count: 1, codeConfig: { pattern: 'ABC' } }],
    ['a charset with a space', { count: 1, codeConfig: { charset: 'A B' } }],
  ])('refuses %s with 400', async (_name, body) => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: discountTemplate });
    const res = await api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, body);
    expect(res.status).toBe(400);
    expect(res.body.errors.length).toBeGreaterThan(0);
  });

  it('answers 404 for a missing campaign', async () => {
    const { api } = await service.newWorkspace();
    expect((await api.post(`/api/v1/campaigns/${randomUUID()}/vouchers/generate`, { count: 1 })).status).toBe(404);
  });
});

describe('voucher generation: security', () => {
  it("answers another workspace's campaign exactly as a missing one and creates nothing there", async () => {
    const owner = await service.newWorkspace();
    const stranger = await service.newWorkspace();
    const campaignId = await createCampaign(owner.api, { voucher: discountTemplate });
    const foreign = await stranger.api.post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 10 });
    const missing = await stranger.api.post(`/api/v1/campaigns/${randomUUID()}/vouchers/generate`, { count: 10 });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await owner.api.get(`/api/v1/vouchers?campaignId=${campaignId}`)).body.data).toEqual([]);
  });

  it('needs vouchers:write', async () => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: discountTemplate });
    const key = await api.post('/api/v1/api-keys', { name: 'reader', scopes: ['vouchers:read', 'campaigns:write'] });
    const res = await service.api(key.body.key).post(`/api/v1/campaigns/${campaignId}/vouchers/generate`, { count: 1 });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });
});
