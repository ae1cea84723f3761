// Insights over a real service: refusals by code, budget burn and redemption periods in a half-hour time zone, gift
// card liability, webhook health; bad ranges are 400; the insights:read scope and the workspace boundary hold.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/domains/access/index.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
}, 60_000);
afterAll(async () => {
  await service?.close();
});

const order = (amount = 10_000, currency = 'EUR') => ({ order: { amount, currency } });

/** Asks until `check` holds (refusal counts are written every 2 s and answers cached 2 s), for at most 10 s. */
async function eventually<T>(ask: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    const value = await ask();
    if (check(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('insights: figures', () => {
  it('counts refusals by code: redemptions and stacks in count, validations apart, per campaign on request', async () => {
    const { api } = await service.newWorkspace();
    const campaign = await api.create('/api/v1/campaigns', { name: 'Limited', type: 'DISCOUNT_COUPONS', currency: 'EUR' });
    const code = `LIM-${randomUUID().slice(0, 8)}`;
    await api.create('/api/v1/vouchers', { code, campaignId: campaign.id, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, redemptionLimit: 1 });
    const disabled = `OFF-${randomUUID().slice(0, 8)}`;
    await api.create('/api/v1/vouchers', { code: disabled, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', active: false });

    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push((await api.post(`/api/v1/vouchers/${code}/redemption`, order())).body);
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, false, false]);
    for (let i = 0; i < 3; i++) expect((await api.post('/api/v1/vouchers/NO-SUCH-CODE/redemption', order())).body.code).toBe('voucher_not_found');
    const stack = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: disabled }, { code: disabled }], ...order(), idempotencyKey: randomUUID() });
    expect(stack.body.code).toBe('duplicate_voucher');
    for (let i = 0; i < 2; i++) expect((await api.post(`/api/v1/vouchers/${disabled}/validate`, order())).body.code).toBe('voucher_disabled');
    // A replay of a refused stack is not a second refusal.
    const key = randomUUID();
    await api.post('/api/v1/redemptions/stack', { vouchers: [{ code }], ...order(), idempotencyKey: key });
    expect((await api.post('/api/v1/redemptions/stack', { vouchers: [{ code }], ...order(), idempotencyKey: key })).body.idempotent).toBe(true);

    const expected = [
      { code: 'redemption_limit_reached', count: 4, redemptions: 3, stacks: 1, validations: 0 },
      { code: 'voucher_not_found', count: 3, redemptions: 3, stacks: 0, validations: 0 },
      { code: 'duplicate_voucher', count: 1, redemptions: 0, stacks: 1, validations: 0 },
      { code: 'voucher_disabled', count: 0, redemptions: 0, stacks: 0, validations: 2 },
    ];
    const all = await eventually(() => api.get('/api/v1/insights/failures'), (r) => JSON.stringify(r.body.data) === JSON.stringify(expected));
    expect(all.status).toBe(200);
    expect(all.body.data).toEqual(expected);
    const ofCampaign = await eventually(() => api.get(`/api/v1/insights/failures?campaignId=${campaign.id}`), (r) => r.body.data?.length === 1);
    expect(ofCampaign.body.data).toEqual([expected[0]]);
  }, 30_000);

  it("sums redemptions into the workspace's days and hours in a half-hour zone, and burns budgets that reset at its midnight", async () => {
    const { api, workspaceId } = await service.newWorkspace();
    expect((await api.patch('/api/v1/workspace', { timeZone: 'Asia/Kolkata' })).status).toBe(200);
    const campaign = await api.create('/api/v1/campaigns', {
      name: 'Diwali',
      type: 'DISCOUNT_COUPONS',
      currency: 'INR',
      budget: { daily: { redemptions: 10 }, total: { discountAmount: 100_000 } },
      voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 2_500 } },
    });
    const { codes } = (await api.post(`/api/v1/campaigns/${campaign.id}/vouchers/generate`, { count: 3 })).body;
    const redeemed = [];
    for (const c of codes) redeemed.push((await api.post(`/api/v1/vouchers/${c}/redemption`, order(10_000, 'INR'))).body);
    expect(redeemed.every((r) => r.ok)).toBe(true);
    expect((await api.post(`/api/v1/redemptions/${redeemed[0].redemption.id}/rollback`, {})).body.ok).toBe(true);

    // Kolkata is UTC+5:30: its days start at 18:30Z and its hours at :30.
    const now = Date.now();
    const localDayStart = Math.floor((now + 5.5 * 3_600_000) / 86_400_000) * 86_400_000 - 5.5 * 3_600_000;
    const byDay = await api.get('/api/v1/insights/redemptions?interval=day');
    expect(byDay.body.data).toEqual([
      {
        period: new Date(localDayStart).toISOString(),
        currency: 'INR',
        redemptions: 3,
        rollbacks: 1,
        discountAmount: 7_500,
        giftAmount: 0,
        rolledBackAmount: 2_500,
        rolledBackDiscountAmount: 2_500,
        rolledBackGiftAmount: 0,
      },
    ]);
    const byHour = await api.get('/api/v1/insights/redemptions?interval=hour');
    const localHourStart = Math.floor((now + 1_800_000) / 3_600_000) * 3_600_000 - 1_800_000;
    expect(byHour.body.data.map((p: { period: string }) => p.period)).toEqual([new Date(localHourStart).toISOString()]);
    const { rows } = await service.pool.query(`SELECT DISTINCT extract(minute FROM hour)::int AS minute FROM redemption_rollups WHERE workspace_id = $1`, [workspaceId]);
    expect(rows).toEqual([{ minute: 30 }]);

    const budgets = await api.get('/api/v1/insights/budgets');
    expect(budgets.status).toBe(200);
    const localDate = new Date(localDayStart + 5.5 * 3_600_000).toISOString().slice(0, 10);
    expect(budgets.body.data).toEqual([
      {
        campaignId: campaign.id,
        name: 'Diwali',
        active: true,
        limits: [
          { period: 'total', key: 'total', limit: { discountAmount: 100_000 }, used: { redemptions: 2, discountAmount: 5_000 }, burn: 0.05, resetsAt: null },
          {
            period: 'daily',
            key: `day:${localDate}`,
            limit: { redemptions: 10 },
            used: { redemptions: 2, discountAmount: 5_000 },
            burn: 0.2,
            resetsAt: new Date(localDayStart + 86_400_000).toISOString(),
          },
        ],
      },
    ]);
    const top = await api.get('/api/v1/insights/campaigns');
    expect(top.body.data).toEqual([{ campaignId: campaign.id, name: 'Diwali', currency: 'INR', redemptions: 3, discountAmount: 7_500, giftAmount: 0, rollbacks: 1 }]);
  }, 30_000);

  it('reports outstanding gift card balances per currency', async () => {
    const { api } = await service.newWorkspace();
    const eur = `GC-${randomUUID().slice(0, 8)}`;
    await api.create('/api/v1/vouchers', { code: eur, type: 'GIFT_CARD', gift: { amount: 5_000, currency: 'EUR' } });
    await api.create('/api/v1/vouchers', { code: `GC-${randomUUID().slice(0, 8)}`, type: 'GIFT_CARD', gift: { amount: 700, currency: 'EUR' } });
    await api.create('/api/v1/vouchers', { code: `GC-${randomUUID().slice(0, 8)}`, type: 'GIFT_CARD', gift: { amount: 900, currency: 'USD' } });
    expect((await api.post(`/api/v1/vouchers/${eur}/redemption`, { amount: 1_200 })).body.ok).toBe(true);
    const spent = `GC-${randomUUID().slice(0, 8)}`;
    await api.create('/api/v1/vouchers', { code: spent, type: 'GIFT_CARD', gift: { amount: 300, currency: 'USD' } });
    expect((await api.post(`/api/v1/vouchers/${spent}/redemption`, { amount: 300 })).body.ok).toBe(true);

    const liability = await api.get('/api/v1/insights/gift-cards');
    expect(liability.body.data).toEqual([
      { currency: 'EUR', outstanding: 4_500, cards: 2, cardsWithBalance: 2 },
      { currency: 'USD', outstanding: 900, cards: 2, cardsWithBalance: 1 },
    ]);
    const figures = await api.get('/api/v1/insights/redemptions');
    expect(figures.body.data.map((p: { currency: string; giftAmount: number }) => [p.currency, p.giftAmount])).toEqual([['EUR', 1_200], ['USD', 300]]);
  }, 30_000);

  it('reports webhook deliveries by status, the oldest pending one and the success rate of the last 24 h', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const empty = await api.get('/api/v1/insights/webhooks');
    expect(empty.body).toEqual({ deliveries: { pending: 0, delivered: 0, retryScheduled: 0, dead: 0 }, oldestPendingAt: null, oldestPendingAgeSeconds: null, last24h: { attempts: 0, succeeded: 0, successRate: null } });

    // Delivery records as the worker leaves them (the worker itself is tested in test/webhooks).
    const endpoint = randomUUID();
    await service.pool.query(`INSERT INTO webhook_endpoints (workspace_id, id, url, secret_ciphertext) VALUES ($1, $2, 'https://hooks.example/x', '\\x00')`, [workspaceId, endpoint]);
    const statuses = ['delivered', 'delivered', 'delivered', 'pending', 'retry_scheduled', 'dead'];
    const ages = [600, 500, 400, 120, 3_600, 90_000];
    for (let i = 0; i < statuses.length; i++) {
      const event = randomUUID();
      await service.pool.query(`INSERT INTO events (workspace_id, id, type, payload) VALUES ($1, $2, 'customer.created', '{}')`, [workspaceId, event]);
      const delivery = randomUUID();
      await service.pool.query(
        `INSERT INTO webhook_deliveries (workspace_id, id, endpoint_id, event_id, event_type, status, created_at)
         VALUES ($1, $2, $3, $4, 'customer.created', $5, now() - make_interval(secs => $6))`,
        [workspaceId, delivery, endpoint, event, statuses[i], ages[i]],
      );
      // Attempts: the delivered ones succeeded, the retry one failed once, the dead one failed 25 h ago (outside 24 h).
      if (statuses[i] !== 'pending') {
        await service.pool.query(
          `INSERT INTO webhook_delivery_attempts (workspace_id, delivery_id, number, trigger, succeeded, duration_ms, created_at)
           VALUES ($1, $2, 1, 'scheduled', $3, 10, now() - make_interval(secs => $4))`,
          [workspaceId, delivery, statuses[i] === 'delivered', statuses[i] === 'dead' ? 90_000 : 60],
        );
      }
    }
    const health = await eventually(() => api.get('/api/v1/insights/webhooks'), (r) => r.body.deliveries.delivered === 3);
    expect(health.body).toMatchObject({ deliveries: { pending: 1, delivered: 3, retryScheduled: 1, dead: 1 }, last24h: { attempts: 4, succeeded: 3, successRate: 0.75 } });
    expect(health.body.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(3_600);
    expect(health.body.oldestPendingAgeSeconds).toBeLessThan(3_700);
    expect(Date.parse(health.body.oldestPendingAt)).toBeLessThan(Date.now() - 3_599_000);
  }, 30_000);
});

describe('insights: bad requests', () => {
  let api: ApiClient;
  beforeAll(async () => {
    ({ api } = await service.newWorkspace());
  });

  it.each([
    ['from after to', '/insights/redemptions?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'query.from'],
    ['from equal to to', '/insights/failures?from=2026-11-01T00:00:00Z&to=2026-11-01T00:00:00Z', 'query.from'],
    ['hours over more than 31 days', '/insights/redemptions?interval=hour&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:01Z', 'query.to'],
    ['days over more than 366 days', '/insights/redemptions?from=2024-01-01T00:00:00Z&to=2025-01-02T00:00:01Z', 'query.to'],
    ['only a from 60 days back, by hour', `/insights/redemptions?interval=hour&from=${new Date(Date.now() - 60 * 86_400_000).toISOString()}`, 'query.to'],
    ['a range of top campaigns over a year', '/insights/campaigns?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'query.to'],
    ['a timestamp that is not one', '/insights/redemptions?from=yesterday', undefined],
    ['an interval of a week', '/insights/redemptions?interval=week', undefined],
    ['a campaign id that is no uuid', '/insights/failures?campaignId=42', undefined],
    ['a limit of 0', '/insights/campaigns?limit=0', undefined],
    ['a limit of 101', '/insights/budgets?limit=101', undefined],
  ])('answers 400 for %s', async (_label, path, errorPath) => {
    const res = await api.get(`/api/v1${path}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    if (errorPath) expect(res.body.errors?.[0]?.path).toBe(errorPath);
  });

  it('takes the largest ranges allowed, and answers empty periods with no data', async () => {
    expect((await api.get('/api/v1/insights/redemptions?interval=hour&from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z')).body).toEqual({ data: [], returns: [] });
    expect((await api.get('/api/v1/insights/redemptions?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z')).body).toEqual({ data: [], returns: [] });
    expect((await api.get('/api/v1/insights/failures?from=1970-01-01T00:00:00Z&to=1970-01-02T00:00:00Z')).body).toEqual({ data: [] });
  });

  it('answers over RPC too, with the same bounds', async () => {
    const ok = await api.post('/api/rpc/insights.redemptions', { interval: 'hour' });
    expect(ok.status).toBe(200);
    const bad = await api.post('/api/rpc/insights.redemptions', { from: '2026-11-02T00:00:00Z', to: '2026-11-01T00:00:00Z' });
    expect(bad.status).toBe(400);
  });
});

describe('insights: security', () => {
  const paths = ['/insights/redemptions', '/insights/failures', '/insights/campaigns', '/insights/budgets', '/insights/gift-cards', '/insights/webhooks'];

  it('needs the insights:read scope (403 without it, 401 without a key)', async () => {
    const { workspaceId } = await service.newWorkspace();
    const reader = await createApiKey(service.db.pool, { workspaceId, name: 'reader', scopes: ['insights:read'] });
    const other = await createApiKey(service.db.pool, { workspaceId, name: 'vouchers', scopes: ['vouchers:write', 'redemptions:write'] });
    for (const path of paths) {
      expect((await service.api(reader.key).get(`/api/v1${path}`)).status).toBe(200);
      const refused = await service.api(other.key).get(`/api/v1${path}`);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('forbidden');
      expect((await service.api().get(`/api/v1${path}`)).status).toBe(401);
    }
  });

  it("never shows another workspace's figures", async () => {
    const a = await service.newWorkspace();
    const b = await service.newWorkspace();
    const code = `MINE-${randomUUID().slice(0, 8)}`;
    await a.api.create('/api/v1/vouchers', { code, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
    await a.api.create('/api/v1/vouchers', { code: `GCA-${randomUUID().slice(0, 8)}`, type: 'GIFT_CARD', gift: { amount: 100, currency: 'EUR' } });
    expect((await a.api.post(`/api/v1/vouchers/${code}/redemption`, order())).body.ok).toBe(true);
    await a.api.post('/api/v1/vouchers/NOPE/redemption', order());
    expect((await a.api.get('/api/v1/insights/redemptions')).body.data).toHaveLength(1);
    await eventually(() => a.api.get('/api/v1/insights/failures'), (r) => r.body.data.length === 1);
    for (const path of paths.slice(0, 5)) expect((await b.api.get(`/api/v1${path}`)).body).toEqual(path === '/insights/redemptions' ? { data: [], returns: [] } : { data: [] });
  });
});
