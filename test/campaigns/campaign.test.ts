// Campaigns over real HTTP and a real PostgreSQL: CRUD, templates and the currency their money needs, budgets,
// schedules, validation rules, tenancy.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

async function createRule(workspaceId: string): Promise<string> {
  const { rows } = await service.pool.query<{ id: string }>(
    `INSERT INTO validation_rules (workspace_id, name, conditions) VALUES ($1, 'rule', '{"field":"order.amount","op":"gte","value":0}')
     RETURNING id`,
    [workspaceId],
  );
  return rows[0]!.id;
}

const schedule = { timeZone: 'Europe/Berlin', daysOfWeek: [1, 2, 3, 4, 5], windows: [{ start: '09:00', end: '17:30' }] };
const budget = { total: { redemptions: 1000, discountAmount: 500_000 }, daily: { redemptions: 50 }, monthly: { discountAmount: 90_000 } };

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
      schedule: null,
      budget: null,
      oncePerCustomer: false,
      metadata: {},
    });
    expect(created.body.createdAt).toBe(created.body.updatedAt);
    expect(created.body).not.toHaveProperty('budgetUsage');

    const fetched = await api.get(`/api/v1/campaigns/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);

    const list = await api.get('/api/v1/campaigns');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([created.body]);
  });

  it('keeps every field given at creation, the voucher template included', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const ruleId = await createRule(workspaceId);
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
      schedule,
      budget,
      oncePerCustomer: true,
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

  it('replaces the schedule and budget whole on update, clears them with null and toggles oncePerCustomer', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/campaigns', { name: 'Settings', type: 'PROMOTION', schedule, budget });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ schedule, budget, oncePerCustomer: false });

    const replaced = await api.patch(`/api/v1/campaigns/${created.body.id}`, {
      schedule: { daysOfWeek: [0, 6] },
      budget: { weekly: { redemptions: 10 } },
      oncePerCustomer: true,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ schedule: { daysOfWeek: [0, 6] }, budget: { weekly: { redemptions: 10 } }, oncePerCustomer: true });
    expect(replaced.body.budget.total).toBeUndefined();

    const untouched = await api.patch(`/api/v1/campaigns/${created.body.id}`, { name: 'Renamed' });
    expect(untouched.body).toMatchObject({ schedule: { daysOfWeek: [0, 6] }, budget: { weekly: { redemptions: 10 } }, oncePerCustomer: true });

    const cleared = await api.patch(`/api/v1/campaigns/${created.body.id}`, { schedule: null, budget: null, oncePerCustomer: false });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ schedule: null, budget: null, oncePerCustomer: false });
    const { rows } = await service.pool.query('SELECT schedule, budget, once_per_customer FROM campaigns WHERE id = $1', [created.body.id]);
    expect(rows[0]).toEqual({ schedule: null, budget: null, once_per_customer: false });
  });

  it('shows what the current budget periods used, counted in the workspace time zone', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const timeZone = 'Pacific/Kiritimati';
    expect((await api.patch('/api/v1/workspace', { timeZone })).status).toBe(200);
    const created = await api.post('/api/v1/campaigns', {
      name: 'Budgeted',
      type: 'DISCOUNT_COUPONS',
      budget: { total: { redemptions: 100 }, daily: { discountAmount: 5000 }, weekly: { redemptions: 20 } },
    });
    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty('budgetUsage');

    const periods = new ZoneCalendar().budgetPeriods(Date.now(), timeZone);
    await service.pool.query(
      `INSERT INTO campaign_budget_usage (workspace_id, campaign_id, period, redemptions, discount_amount)
       VALUES ($1, $2, $3, 3, 1200), ($1, $2, 'total', 7, 2900), ($1, $2, 'day:2000-01-01', 99, 99)`,
      [workspaceId, created.body.id, periods.day],
    );
    const fetched = await api.get(`/api/v1/campaigns/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.budgetUsage).toEqual({
      total: { redemptions: 7, discountAmount: 2900 },
      daily: { period: periods.day, redemptions: 3, discountAmount: 1200 },
      weekly: { period: periods.week, redemptions: 0, discountAmount: 0 },
    });
    expect(periods.day).toMatch(/^day:\d{4}-\d{2}-\d{2}$/);
    expect((await api.get('/api/v1/campaigns')).body.data[0]).not.toHaveProperty('budgetUsage');

    const unbudgeted = await api.patch(`/api/v1/campaigns/${created.body.id}`, { budget: null });
    expect(unbudgeted.body).not.toHaveProperty('budgetUsage');
    expect((await api.get(`/api/v1/campaigns/${created.body.id}`)).body).not.toHaveProperty('budgetUsage');
  });

  it('accepts validation rules of the workspace on create and update', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const [one, two] = [await createRule(workspaceId), await createRule(workspaceId)];
    const created = await api.post('/api/v1/campaigns', { name: 'Ruled', type: 'PROMOTION', validationRuleIds: [one] });
    expect(created.status).toBe(201);
    expect(created.body.validationRuleIds).toEqual([one]);
    const updated = await api.patch(`/api/v1/campaigns/${created.body.id}`, { validationRuleIds: [two, one] });
    expect(updated.status).toBe(200);
    expect(updated.body.validationRuleIds).toEqual([two, one]);
  });

  it("counts a money template without a currency in the workspace's default: its vouchers take it, and keep it", async () => {
    const { api } = await service.newWorkspace();
    await api.patch('/api/v1/workspace', { defaultCurrency: 'EUR' });
    const amountOff = { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 } };
    const created = await api.post('/api/v1/campaigns', { name: 'Five off', type: 'DISCOUNT_COUPONS', voucher: amountOff });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ currency: null, voucher: amountOff });

    const one = await api.post('/api/v1/vouchers', { campaignId: created.body.id });
    expect(one.status, JSON.stringify(one.body)).toBe(201);
    expect(one.body.currency).toBe('EUR');
    const generated = await api.post(`/api/v1/campaigns/${created.body.id}/vouchers/generate`, { count: 3, codeConfig: { prefix: 'FIVE-' } });
    expect(generated.status).toBe(201);
    const codes = (await api.get(`/api/v1/vouchers?campaignId=${created.body.id}`)).body.data;
    expect(codes.map((v: { currency: string }) => v.currency)).toEqual(['EUR', 'EUR', 'EUR', 'EUR']);
    // A publication from a campaign without free codes makes one from the template.
    const welcome = await api.create('/api/v1/campaigns', { name: 'Welcome', type: 'DISCOUNT_COUPONS', voucher: amountOff });
    const published = await api.post('/api/v1/publications', { campaignId: welcome.id, customer: { sourceId: 'ada' } });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    expect((await api.get(`/api/v1/vouchers/${published.body.voucher.code}`)).body.currency).toBe('EUR');

    // A new default applies to vouchers made from then on; those made before keep what their amounts meant.
    await api.patch('/api/v1/workspace', { defaultCurrency: 'USD' });
    expect((await api.post('/api/v1/vouchers', { campaignId: created.body.id })).body.currency).toBe('USD');
    expect((await api.get(`/api/v1/vouchers/${one.body.code}`)).body.currency).toBe('EUR');
    // The campaign's or the voucher's own currency always comes first.
    const priced = await api.create('/api/v1/campaigns', { name: 'Priced', type: 'DISCOUNT_COUPONS', currency: 'GBP', voucher: amountOff });
    expect((await api.post('/api/v1/vouchers', { campaignId: priced.id })).body).toMatchObject({ currency: null });
    const own = await api.post('/api/v1/vouchers', { campaignId: created.body.id, currency: 'SEK' });
    expect(own.body.currency).toBe('SEK');
    // A voucher in EUR refuses an order in USD.
    const mismatch = await api.post(`/api/v1/vouchers/${one.body.code}/validate`, { order: { amount: 2_000, currency: 'USD' } });
    expect(mismatch.body).toMatchObject({ valid: false, code: 'currency_mismatch' });
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

  it('refuses a money template only when neither it, the campaign nor the workspace names a currency: 400 currency_required', async () => {
    const { api } = await service.newWorkspace();
    const templates = [
      { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 } },
      { type: 'DISCOUNT', discount: { type: 'FIXED', fixedAmount: 900 } },
      { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10, amountLimit: 300 } },
      { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 }, maxDiscount: 300 },
    ];
    for (const voucher of templates) {
      const refused = await api.post('/api/v1/campaigns', { name: 'No currency', type: 'DISCOUNT_COUPONS', voucher });
      expect(refused.status, JSON.stringify(voucher)).toBe(400);
      expect(refused.body).toMatchObject({ code: 'currency_required', errors: [{ path: 'body.currency', message: expect.stringContaining('defaultCurrency') }] });
      expect((await api.post('/api/v1/campaigns', { name: 'Campaign currency', type: 'DISCOUNT_COUPONS', voucher, currency: 'EUR' })).status).toBe(201);
      expect((await api.post('/api/v1/campaigns', { name: 'Template currency', type: 'DISCOUNT_COUPONS', voucher: { ...voucher, currency: 'EUR' } })).status).toBe(201);
    }
    expect((await api.get('/api/v1/campaigns?limit=100')).body.data.filter((c: { name: string }) => c.name === 'No currency')).toEqual([]);
    // Shares of the order need none.
    const percent = await api.create('/api/v1/campaigns', { name: 'Ten percent', type: 'DISCOUNT_COUPONS', voucher: { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } } });

    // An update that leaves a money template without a currency is refused, and changes nothing.
    const moneyPatch = await api.patch(`/api/v1/campaigns/${percent.id}`, { voucher: templates[0] });
    expect(moneyPatch.body).toMatchObject({ status: 400, code: 'currency_required', errors: [{ path: 'body.currency' }] });
    const priced = await api.create('/api/v1/campaigns', { name: 'Priced', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: templates[0] });
    expect((await api.patch(`/api/v1/campaigns/${priced.id}`, { currency: null })).body).toMatchObject({ status: 400, code: 'currency_required' });
    expect((await api.get(`/api/v1/campaigns/${priced.id}`)).body).toMatchObject({ currency: 'EUR' });
    expect((await api.get(`/api/v1/campaigns/${percent.id}`)).body.voucher.discount.type).toBe('PERCENT');

    // With a workspace default, the same requests are taken.
    await api.patch('/api/v1/workspace', { defaultCurrency: 'EUR' });
    expect((await api.patch(`/api/v1/campaigns/${percent.id}`, { voucher: templates[0] })).status).toBe(200);
    expect((await api.patch(`/api/v1/campaigns/${priced.id}`, { currency: null })).status).toBe(200);
    expect((await api.post('/api/v1/campaigns', { name: 'Default currency', type: 'DISCOUNT_COUPONS', voucher: templates[1] })).status).toBe(201);
  });

  it('refuses malformed budgets, naming the field', async () => {
    const { api } = await service.newWorkspace();
    const cases: Array<[unknown, string]> = [
      [{}, 'body.budget'],
      [{ daily: {} }, 'body.budget.daily'],
      [{ total: { redemptions: 0 } }, 'body.budget.total.redemptions'],
      [{ weekly: { discountAmount: 1.5 } }, 'body.budget.weekly.discountAmount'],
      [{ monthly: { redemptions: -3 } }, 'body.budget.monthly.redemptions'],
      [{ yearly: { redemptions: 3 } }, 'body.budget'],
      ['lots', 'body.budget'],
    ];
    const created = await api.post('/api/v1/campaigns', { name: 'Target', type: 'PROMOTION' });
    for (const [value, path] of cases) {
      for (const res of [
        await api.post('/api/v1/campaigns', { name: 'Bad budget', type: 'PROMOTION', budget: value }),
        await api.patch(`/api/v1/campaigns/${created.body.id}`, { budget: value }),
      ]) {
        expect(res.status, JSON.stringify(value)).toBe(400);
        expect(res.body.code).toBe('invalid_request');
        expect(res.body.errors.map((e: { path: string }) => e.path), JSON.stringify(value)).toContain(path);
      }
    }
    expect((await api.get(`/api/v1/campaigns/${created.body.id}`)).body.budget).toBeNull();
    expect((await api.get('/api/v1/campaigns')).body.data).toHaveLength(1);
  });

  it('refuses malformed schedules, naming the field', async () => {
    const { api } = await service.newWorkspace();
    const cases: Array<[unknown, string]> = [
      [{ timeZone: 'Mars/Olympus_Mons' }, 'body.schedule.timeZone'],
      [{ daysOfWeek: [7] }, 'body.schedule.daysOfWeek'],
      [{ windows: [{ start: '25:00', end: '26:00' }] }, 'body.schedule.windows'],
      [{ windows: [{ start: '18:00', end: '09:00' }] }, 'body.schedule.windows'],
    ];
    for (const [value, path] of cases) {
      const res = await api.post('/api/v1/campaigns', { name: 'Bad schedule', type: 'PROMOTION', schedule: value });
      expect(res.status, JSON.stringify(value)).toBe(400);
      const paths: string[] = res.body.errors.map((e: { path: string }) => e.path);
      expect(paths.some((p) => p.startsWith(path)), `${JSON.stringify(value)} → ${paths.join(', ')}`).toBe(true);
    }
    expect((await api.get('/api/v1/campaigns')).body.data).toEqual([]);
  });

  it('refuses validation rule ids the workspace does not have, naming them', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const other = await service.newWorkspace();
    const known = await createRule(workspaceId);
    const foreign = await createRule(other.workspaceId);
    const unknown = randomUUID();
    const create = await api.post('/api/v1/campaigns', { name: 'Rules', type: 'PROMOTION', validationRuleIds: [known, unknown, foreign] });
    expect(create.status).toBe(400);
    expect(create.body.errors).toHaveLength(1);
    expect(create.body.errors[0].path).toBe('body.validationRuleIds');
    expect(create.body.errors[0].message).toContain(unknown);
    expect(create.body.errors[0].message).toContain(foreign);
    expect(create.body.errors[0].message).not.toContain(known);
    expect((await api.get('/api/v1/campaigns')).body.data).toEqual([]);

    const created = await api.post('/api/v1/campaigns', { name: 'Rules', type: 'PROMOTION', validationRuleIds: [known] });
    const update = await api.patch(`/api/v1/campaigns/${created.body.id}`, { validationRuleIds: [unknown] });
    expect(update.status).toBe(400);
    expect(update.body.errors).toEqual([expect.objectContaining({ path: 'body.validationRuleIds', message: expect.stringContaining(unknown) })]);
    expect((await api.get(`/api/v1/campaigns/${created.body.id}`)).body.validationRuleIds).toEqual([known]);
    expect((await api.patch(`/api/v1/campaigns/${randomUUID()}`, { validationRuleIds: [unknown] })).status).toBe(404);
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
