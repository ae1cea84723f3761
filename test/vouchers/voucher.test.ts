import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

function createCampaignResponse(api: ApiClient, body: Record<string, unknown>) {
  return api.post('/api/v1/campaigns', { name: 'Campaign', type: 'DISCOUNT_COUPONS', ...body });
}

async function createCampaign(api: ApiClient, body: Record<string, unknown>) {
  const res = await api.post('/api/v1/campaigns', { name: 'Campaign', type: 'DISCOUNT_COUPONS', ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string };
}

async function createRule(workspaceId: string): Promise<string> {
  const { rows } = await service.pool.query<{ id: string }>(
    `INSERT INTO validation_rules (workspace_id, name, conditions) VALUES ($1, 'rule', '{"field":"order.amount","op":"gte","value":0}')
     RETURNING id`,
    [workspaceId],
  );
  return rows[0]!.id;
}

/** A promotion tier row as the tiers feature stores it: a voucher row of kind TIER. */
async function insertTierRow(workspaceId: string, campaignId: string, code?: string): Promise<string> {
  const { rows } = await service.pool.query<{ code: string }>(
    `INSERT INTO vouchers (workspace_id, code, campaign_id, type, discount, kind)
     VALUES ($1, COALESCE($3, 'tier:' || gen_random_uuid()), $2, 'DISCOUNT', '{"type":"PERCENT","percentOff":10}', 'TIER')
     RETURNING code`,
    [workspaceId, campaignId, code ?? null],
  );
  return rows[0]!.code;
}

const weekdays = { daysOfWeek: [1, 2, 3, 4, 5], windows: [{ start: '08:00', end: '12:00' }, { start: '14:00', end: '24:00' }] };

async function ledgerOf(voucherId: string) {
  const { rows } = await service.pool.query<{ type: string; amount: number; balance_after: number }>(
    'SELECT type, amount, balance_after FROM gift_ledger_entries WHERE voucher_id = $1',
    [voucherId],
  );
  return rows;
}

describe('vouchers: happy path', () => {
  it('creates a standalone discount voucher and reads it back by code', async () => {
    const { api } = await service.newWorkspace();
    const customerId = randomUUID();
    const body = {
      code: 'WELCOME10',
      type: 'DISCOUNT',
      discount: { type: 'PERCENT', percentOff: 10, amountLimit: 1500 },
      currency: 'EUR',
      startDate: '2026-01-01T00:00:00.000Z',
      expirationDate: '2027-01-01T00:00:00.000Z',
      redemptionLimit: 3,
      perCustomerLimit: 1,
      priority: 5,
      exclusive: true,
      maxDiscount: 1000,
      customerId,
      metadata: { source: 'newsletter' },
    };
    const created = await api.post('/api/v1/vouchers', body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      code: 'WELCOME10',
      campaignId: null,
      type: 'DISCOUNT',
      discount: body.discount,
      currency: 'EUR',
      active: true,
      startDate: body.startDate,
      expirationDate: body.expirationDate,
      redemption: { limit: 3, redeemedCount: 0 },
      perCustomerLimit: 1,
      priority: 5,
      exclusive: true,
      maxDiscount: 1000,
      customerId,
      validationRuleIds: [],
      schedule: null,
      metadata: { source: 'newsletter' },
    });
    expect(created.body.gift).toBeUndefined();
    const fetched = await api.get('/api/v1/vouchers/WELCOME10');
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
  });

  it('takes the fields a creation leaves out from the campaign template, and the given ones win', async () => {
    const { api } = await service.newWorkspace();
    const campaign = await createCampaign(api, {
      currency: 'EUR',
      voucher: {
        discount: { type: 'AMOUNT', amountOff: 500 },
        redemptionLimit: 10,
        perCustomerLimit: 2,
        priority: 3,
        exclusive: true,
        maxDiscount: 400,
        expirationDate: '2027-06-30T00:00:00.000Z',
        metadata: { from: 'template' },
      },
    });
    const inherited = await api.post('/api/v1/vouchers', { campaignId: campaign.id, code: 'INHERIT-1' });
    expect(inherited.status).toBe(201);
    expect(inherited.body).toMatchObject({
      campaignId: campaign.id,
      type: 'DISCOUNT',
      discount: { type: 'AMOUNT', amountOff: 500 },
      currency: null,
      redemption: { limit: 10, redeemedCount: 0 },
      perCustomerLimit: 2,
      priority: 3,
      exclusive: true,
      maxDiscount: 400,
      expirationDate: '2027-06-30T00:00:00.000Z',
      metadata: { from: 'template' },
    });

    const overridden = await api.post('/api/v1/vouchers', {
      campaignId: campaign.id,
      code: 'INHERIT-2',
      discount: { type: 'FIXED', fixedAmount: 999 },
      redemptionLimit: null,
      priority: 9,
      metadata: { from: 'request' },
    });
    expect(overridden.status).toBe(201);
    expect(overridden.body).toMatchObject({
      discount: { type: 'FIXED', fixedAmount: 999 },
      redemption: { limit: null, redeemedCount: 0 },
      priority: 9,
      perCustomerLimit: 2,
      metadata: { from: 'request' },
    });
  });

  it('creates a gift card whose balance equals its amount and whose ledger sums to the balance', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/vouchers', { code: 'GIFT-100', type: 'GIFT_CARD', gift: { amount: 10_000, currency: 'EUR' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ type: 'GIFT_CARD', discount: null, currency: 'EUR', gift: { amount: 10_000, balance: 10_000, currency: 'EUR' } });
    const ledger = await ledgerOf(created.body.id);
    expect(ledger).toEqual([{ type: 'CREDITS_ADDED', amount: 10_000, balance_after: 10_000 }]);
    expect(ledger.reduce((sum, e) => sum + e.amount, 0)).toBe(created.body.gift.balance);
  });

  it('derives the voucher type from the campaign type and its gift credits from the template', async () => {
    const { api } = await service.newWorkspace();
    const campaign = await createCampaign(api, { type: 'GIFT_VOUCHERS', voucher: { gift: { amount: 2500, currency: 'USD' } } });
    const created = await api.post('/api/v1/vouchers', { campaignId: campaign.id, code: 'CARD-1' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ type: 'GIFT_CARD', currency: 'USD', gift: { amount: 2500, balance: 2500, currency: 'USD' } });
    expect(await ledgerOf(created.body.id)).toHaveLength(1);
  });

  it('generates a code from the campaign codeConfig when none is given', async () => {
    const { api } = await service.newWorkspace();
    const campaign = await createCampaign(api, {
      voucher: { discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', codeConfig: { prefix: 'AUTO-', pattern: '####-####', charset: 'numbers' } },
    });
    const created = await api.post('/api/v1/vouchers', { campaignId: campaign.id });
    expect(created.status).toBe(201);
    expect(created.body.code).toMatch(/^AUTO-\d{4}-\d{4}$/);
    const standalone = await api.post('/api/v1/vouchers', { type: 'LOYALTY_CARD' });
    expect(standalone.body.code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/);
  });

  it('matches codes case-sensitively and serves codes with dots, dashes and underscores', async () => {
    const { api } = await service.newWorkspace();
    const discount = { type: 'AMOUNT', amountOff: 100 };
    expect((await api.post('/api/v1/vouchers', { code: 'spring.sale_1-a', type: 'DISCOUNT', discount, currency: 'EUR' })).status).toBe(201);
    expect((await api.post('/api/v1/vouchers', { code: 'SPRING.SALE_1-A', type: 'DISCOUNT', discount, currency: 'EUR' })).status).toBe(201);
    expect((await api.get('/api/v1/vouchers/spring.sale_1-a')).body.code).toBe('spring.sale_1-a');
    expect((await api.get('/api/v1/vouchers/SPRING.SALE_1-A')).body.code).toBe('SPRING.SALE_1-A');
    expect((await api.get('/api/v1/vouchers/Spring.Sale_1-A')).status).toBe(404);
  });

  it('updates settings, disables and enables, then deletes a voucher with its ledger', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const ruleId = await createRule(workspaceId);
    const created = await api.post('/api/v1/vouchers', { code: 'CARD-X', type: 'GIFT_CARD', gift: { amount: 700, currency: 'EUR' } });
    const updated = await api.patch('/api/v1/vouchers/CARD-X', {
      redemptionLimit: 4,
      expirationDate: '2027-01-01T00:00:00.000Z',
      priority: 2,
      validationRuleIds: [ruleId],
      metadata: { note: 'vip' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      code: 'CARD-X',
      type: 'GIFT_CARD',
      gift: { amount: 700, balance: 700, currency: 'EUR' },
      redemption: { limit: 4, redeemedCount: 0 },
      expirationDate: '2027-01-01T00:00:00.000Z',
      priority: 2,
      validationRuleIds: [ruleId],
      metadata: { note: 'vip' },
    });
    const cleared = await api.patch('/api/v1/vouchers/CARD-X', { redemptionLimit: null, expirationDate: null });
    expect(cleared.body).toMatchObject({ redemption: { limit: null }, expirationDate: null, priority: 2 });

    const disabled = await api.post('/api/v1/vouchers/CARD-X/disable', {});
    expect(disabled.status).toBe(200);
    expect(disabled.body.active).toBe(false);
    expect((await api.get('/api/v1/vouchers/CARD-X')).body.active).toBe(false);
    const enabled = await api.post('/api/v1/vouchers/CARD-X/enable', {});
    expect(enabled.body.active).toBe(true);

    expect((await api.delete('/api/v1/vouchers/CARD-X')).status).toBe(204);
    expect((await api.get('/api/v1/vouchers/CARD-X')).status).toBe(404);
    expect(await ledgerOf(created.body.id)).toEqual([]);
  });

  it('keeps a schedule given at creation, replaces it on update and clears it with null', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const ruleId = await createRule(workspaceId);
    const created = await api.post('/api/v1/vouchers', {
      code: 'OFFICE-HOURS',
      type: 'DISCOUNT',
      discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR',
      schedule: weekdays,
      validationRuleIds: [ruleId],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ schedule: weekdays, validationRuleIds: [ruleId] });
    expect((await api.get('/api/v1/vouchers/OFFICE-HOURS')).body.schedule).toEqual(weekdays);

    const zoned = { timeZone: 'America/Chicago', daysOfWeek: [0] };
    const replaced = await api.patch('/api/v1/vouchers/OFFICE-HOURS', { schedule: zoned });
    expect(replaced.status).toBe(200);
    expect(replaced.body.schedule).toEqual(zoned);
    expect((await api.patch('/api/v1/vouchers/OFFICE-HOURS', { priority: 1 })).body.schedule).toEqual(zoned);
    const cleared = await api.patch('/api/v1/vouchers/OFFICE-HOURS', { schedule: null });
    expect(cleared.body.schedule).toBeNull();
  });

  it("takes the schedule from the campaign's voucher template, on creation and bulk generation", async () => {
    const { api } = await service.newWorkspace();
    const campaign = await createCampaign(api, { voucher: { discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', schedule: weekdays } });
    const inherited = await api.post('/api/v1/vouchers', { campaignId: campaign.id, code: 'SCHED-1' });
    expect(inherited.body.schedule).toEqual(weekdays);
    const own = await api.post('/api/v1/vouchers', { campaignId: campaign.id, code: 'SCHED-2', schedule: { daysOfWeek: [6] } });
    expect(own.body.schedule).toEqual({ daysOfWeek: [6] });
    const none = await api.post('/api/v1/vouchers', { campaignId: campaign.id, code: 'SCHED-3', schedule: null });
    expect(none.body.schedule).toBeNull();
    const generated = await api.post(`/api/v1/campaigns/${campaign.id}/vouchers/generate`, { count: 3 });
    expect(generated.status).toBe(201);
    for (const code of generated.body.codes) expect((await api.get(`/api/v1/vouchers/${code}`)).body.schedule).toEqual(weekdays);
  });

  it('changes the discount of a discount voucher', async () => {
    const { api } = await service.newWorkspace();
    await api.post('/api/v1/vouchers', { code: 'D1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 } });
    const res = await api.patch('/api/v1/vouchers/D1', { discount: { type: 'UNIT', unitOff: 1, sku: 'MUG-01' } });
    expect(res.status).toBe(200);
    expect(res.body.discount).toEqual({ type: 'UNIT', unitOff: 1, sku: 'MUG-01' });
  });

  it('lists vouchers newest first and filters them by campaign', async () => {
    const { api } = await service.newWorkspace();
    const a = await createCampaign(api, { voucher: { discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' } });
    const b = await createCampaign(api, { voucher: { discount: { type: 'AMOUNT', amountOff: 200 }, currency: 'EUR' } });
    for (const code of ['A1', 'A2', 'A3']) await api.post('/api/v1/vouchers', { campaignId: a.id, code });
    await api.post('/api/v1/vouchers', { campaignId: b.id, code: 'B1' });

    const all = await api.get('/api/v1/vouchers');
    expect(all.body.data.map((v: { code: string }) => v.code)).toEqual(['B1', 'A3', 'A2', 'A1']);
    const page = await api.get(`/api/v1/vouchers?campaignId=${a.id}&limit=2`);
    expect(page.body.data.map((v: { code: string }) => v.code)).toEqual(['A3', 'A2']);
    const rest = await api.get(`/api/v1/vouchers?campaignId=${a.id}&limit=2&cursor=${page.body.next}`);
    expect(rest.body.data.map((v: { code: string }) => v.code)).toEqual(['A1']);
    expect(rest.body.next).toBeUndefined();
    const other = await api.get(`/api/v1/vouchers?campaignId=${b.id}`);
    expect(other.body.data.map((v: { code: string }) => v.code)).toEqual(['B1']);
  });
});

describe('vouchers: errors', () => {
  it('answers a taken code with 409 conflict as problem+json', async () => {
    const { api } = await service.newWorkspace();
    const body = { code: 'ONCE', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' };
    expect((await api.post('/api/v1/vouchers', body)).status).toBe(201);
    const again = await api.post('/api/v1/vouchers', body);
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toContain('application/problem+json');
    expect(again.body).toMatchObject({ type: expect.any(String), title: expect.any(String), status: 409, code: 'conflict' });
  });

  it.each([
    ['percentOff 0', { type: 'PERCENT', percentOff: 0 }],
    ['percentOff 101', { type: 'PERCENT', percentOff: 101 }],
    ['a UNIT discount without productId or sku', { type: 'UNIT', unitOff: 1 }],
    ['an unknown discount type', { type: 'BOGO' }],
  ])('refuses %s with 400 and field errors', async (_name, discount) => {
    const { api } = await service.newWorkspace();
    const res = await api.post('/api/v1/vouchers', { code: 'BAD', type: 'DISCOUNT', discount });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.errors.length).toBeGreaterThan(0);
    expect(res.body.errors[0]).toEqual({ path: expect.stringContaining('discount'), message: expect.any(String) });
  });

  it('refuses a voucher whose amounts are money without a currency (its own or its campaign’s), 400 currency_required', async () => {
    const { api } = await service.newWorkspace();
    for (const [code, fields] of [
      ['M-AMOUNT', { discount: { type: 'AMOUNT', amountOff: 500 } }],
      ['M-FIXED', { discount: { type: 'FIXED', fixedAmount: 900 } }],
      ['M-CAP', { discount: { type: 'PERCENT', percentOff: 10, amountLimit: 300 } }],
      ['M-MAX', { discount: { type: 'PERCENT', percentOff: 10 }, maxDiscount: 300 }],
    ] as const) {
      const refused = await api.post('/api/v1/vouchers', { code, type: 'DISCOUNT', ...fields });
      expect(refused.status, code).toBe(400);
      expect(refused.body).toMatchObject({ code: 'currency_required', errors: [{ path: 'body.currency' }] });
      expect((await api.get(`/api/v1/vouchers/${code}`)).status).toBe(404);
      expect((await api.post('/api/v1/vouchers', { code, type: 'DISCOUNT', ...fields, currency: 'EUR' })).status, code).toBe(201);
    }
    // shares and units of the order itself need none
    expect((await api.post('/api/v1/vouchers', { code: 'M-PCT', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } })).status).toBe(201);
    expect((await api.post('/api/v1/vouchers', { code: 'M-UNIT', type: 'DISCOUNT', discount: { type: 'UNIT', unitOff: 1, sku: 'A' } })).status).toBe(201);
    // the campaign's currency is enough, for a creation and a generation from its template
    const priced = await createCampaign(api, { currency: 'EUR', voucher: { discount: { type: 'AMOUNT', amountOff: 100 } } });
    expect((await api.post('/api/v1/vouchers', { campaignId: priced.id })).status).toBe(201);
    // a campaign whose money template names no currency cannot be made any more; one made before the rule cannot generate
    const refusedCampaign = await api.post('/api/v1/campaigns', { name: 'Bare', type: 'DISCOUNT_COUPONS', voucher: { discount: { type: 'AMOUNT', amountOff: 100 } } });
    expect(refusedCampaign.body).toMatchObject({ status: 400, code: 'currency_required' });
    const bare = await createCampaign(api, { currency: 'EUR', voucher: { discount: { type: 'AMOUNT', amountOff: 100 } } });
    await service.pool.query('UPDATE campaigns SET currency = NULL WHERE id = $1', [bare.id]);
    const generated = await api.post(`/api/v1/campaigns/${bare.id}/vouchers/generate`, { count: 3 });
    expect(generated.status).toBe(400);
    expect(generated.body).toMatchObject({ code: 'currency_required', errors: [{ path: 'campaign.voucher.currency' }] });
    // a discount patched into money on a voucher without a currency is refused; given one, it is taken, and kept
    const patched = await api.patch('/api/v1/vouchers/M-PCT', { discount: { type: 'AMOUNT', amountOff: 100 } });
    expect(patched.body).toMatchObject({ status: 400, code: 'currency_required' });
    const priced2 = await api.patch('/api/v1/vouchers/M-PCT', { discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'USD' });
    expect(priced2.body).toMatchObject({ currency: 'USD', discount: { type: 'AMOUNT', amountOff: 100 } });
    expect((await api.patch('/api/v1/vouchers/M-PCT', { currency: 'EUR' })).body).toMatchObject({ status: 400, errors: [{ path: 'body.currency' }] });
  });

  it("gives a voucher whose money neither it nor its campaign prices the workspace's default currency, at creation and by PATCH", async () => {
    const { api } = await service.newWorkspace();
    await api.patch('/api/v1/workspace', { defaultCurrency: 'EUR' });
    const made = await api.post('/api/v1/vouchers', { code: 'D-AMOUNT', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.currency).toBe('EUR');
    // Shares of the order stay without one: they fit an order in any currency.
    const percent = await api.post('/api/v1/vouchers', { code: 'D-PCT', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } });
    expect(percent.body.currency).toBeNull();
    const patched = await api.patch('/api/v1/vouchers/D-PCT', { maxDiscount: 300 });
    expect(patched.body).toMatchObject({ maxDiscount: 300, currency: 'EUR' });
    const redeemed = await api.post('/api/v1/vouchers/D-AMOUNT/redemption', { order: { amount: 2_000, currency: 'EUR' } });
    expect(redeemed.body).toMatchObject({ ok: true, redemption: { amount: 500 } });
    expect((await api.post('/api/v1/vouchers/D-AMOUNT/validate', { order: { amount: 2_000, currency: 'USD' } })).body).toMatchObject({ valid: false, code: 'currency_mismatch' });
  });

  it('refuses a voucher without the parts its type needs', async () => {
    const { api } = await service.newWorkspace();
    const noType = await api.post('/api/v1/vouchers', { code: 'X1', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' });
    expect(noType.status).toBe(400);
    expect(noType.body.errors).toEqual([expect.objectContaining({ path: 'body.type' })]);
    const noDiscount = await api.post('/api/v1/vouchers', { code: 'X2', type: 'DISCOUNT' });
    expect(noDiscount.body.errors).toEqual([expect.objectContaining({ path: 'body.discount' })]);
    const noGift = await api.post('/api/v1/vouchers', { code: 'X3', type: 'GIFT_CARD' });
    expect(noGift.body.errors).toEqual([expect.objectContaining({ path: 'body.gift' })]);
    const giftOnDiscount = await api.post('/api/v1/vouchers', {
      code: 'X4',
      type: 'DISCOUNT',
      discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR',
      gift: { amount: 1, currency: 'EUR' },
    });
    expect(giftOnDiscount.body.errors).toEqual([expect.objectContaining({ path: 'body.gift' })]);
    const currencies = await api.post('/api/v1/vouchers', { code: 'X5', type: 'GIFT_CARD', gift: { amount: 1, currency: 'EUR' }, currency: 'USD' });
    expect(currencies.body.errors).toEqual([expect.objectContaining({ path: 'body.currency' })]);
    for (const res of [noDiscount, noGift, giftOnDiscount, currencies]) expect(res.status).toBe(400);
    expect((await api.get('/api/v1/vouchers')).body.data).toEqual([]);
  });

  it('refuses malformed codes', async () => {
    const { api } = await service.newWorkspace();
    const discount = { type: 'AMOUNT', amountOff: 1 };
    for (const code of ['', 'has space', 'ümlaut', 'x'.repeat(101)]) {
      expect((await api.post('/api/v1/vouchers', { code, type: 'DISCOUNT', discount })).status).toBe(400);
    }
  });

  it('refuses a redemptionLimit below the redemptions already made with 409', async () => {
    const { api } = await service.newWorkspace();
    await api.post('/api/v1/vouchers', { code: 'USED', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR', redemptionLimit: 10 });
    await service.pool.query("UPDATE vouchers SET redeemed_count = 5 WHERE code = 'USED'");
    const res = await api.patch('/api/v1/vouchers/USED', { redemptionLimit: 4 });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
    expect((await api.get('/api/v1/vouchers/USED')).body.redemption).toEqual({ limit: 10, redeemedCount: 5 });
    expect((await api.patch('/api/v1/vouchers/USED', { redemptionLimit: 5 })).status).toBe(200);
  });

  it('refuses a discount on a gift card and dates out of order on update', async () => {
    const { api } = await service.newWorkspace();
    await api.post('/api/v1/vouchers', {
      code: 'CARD',
      type: 'GIFT_CARD',
      gift: { amount: 100, currency: 'EUR' },
      startDate: '2026-06-01T00:00:00.000Z',
    });
    const discount = await api.patch('/api/v1/vouchers/CARD', { discount: { type: 'AMOUNT', amountOff: 1 } });
    expect(discount.status).toBe(400);
    expect(discount.body.errors).toEqual([expect.objectContaining({ path: 'body.discount' })]);
    const dates = await api.patch('/api/v1/vouchers/CARD', { expirationDate: '2026-05-01T00:00:00.000Z' });
    expect(dates.status).toBe(400);
    expect(dates.body.errors).toEqual([expect.objectContaining({ path: 'body.expirationDate' })]);
  });

  it('refuses malformed schedules, naming the field', async () => {
    const { api } = await service.newWorkspace();
    await api.post('/api/v1/vouchers', { code: 'S1', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' });
    for (const [schedule, path] of [
      [{ daysOfWeek: [-1] }, 'body.schedule.daysOfWeek'],
      [{ windows: [{ start: '9:00', end: '10:00' }] }, 'body.schedule.windows'],
      [{ timeZone: 'Atlantis/Capital' }, 'body.schedule.timeZone'],
    ] as const) {
      for (const res of [
        await api.post('/api/v1/vouchers', { code: 'S2', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR', schedule }),
        await api.patch('/api/v1/vouchers/S1', { schedule }),
      ]) {
        expect(res.status, JSON.stringify(schedule)).toBe(400);
        const paths: string[] = res.body.errors.map((e: { path: string }) => e.path);
        expect(paths.some((p) => p.startsWith(path)), paths.join(', ')).toBe(true);
      }
    }
    expect((await api.get('/api/v1/vouchers/S2')).status).toBe(404);
    expect((await api.get('/api/v1/vouchers/S1')).body.schedule).toBeNull();
    const badTemplate = await createCampaignResponse(api, { voucher: { schedule: { daysOfWeek: [9] } } });
    expect(badTemplate.status).toBe(400);
  });

  it('refuses validation rule ids the workspace does not have, naming them', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const stranger = await service.newWorkspace();
    const known = await createRule(workspaceId);
    const foreign = await createRule(stranger.workspaceId);
    const unknown = randomUUID();
    const discount = { type: 'AMOUNT', amountOff: 1 };
    const create = await api.post('/api/v1/vouchers', { code: 'RULED', type: 'DISCOUNT', discount, currency: 'EUR', validationRuleIds: [unknown, known, foreign] });
    expect(create.status).toBe(400);
    expect(create.body.errors).toHaveLength(1);
    expect(create.body.errors[0].path).toBe('body.validationRuleIds');
    expect(create.body.errors[0].message).toContain(unknown);
    expect(create.body.errors[0].message).toContain(foreign);
    expect(create.body.errors[0].message).not.toContain(known);
    expect((await api.get('/api/v1/vouchers/RULED')).status).toBe(404);

    expect((await api.post('/api/v1/vouchers', { code: 'RULED', type: 'DISCOUNT', discount, currency: 'EUR', validationRuleIds: [known] })).status).toBe(201);
    const update = await api.patch('/api/v1/vouchers/RULED', { validationRuleIds: [known, unknown] });
    expect(update.status).toBe(400);
    expect(update.body.errors).toEqual([expect.objectContaining({ path: 'body.validationRuleIds', message: expect.stringContaining(unknown) })]);
    expect((await api.get('/api/v1/vouchers/RULED')).body.validationRuleIds).toEqual([known]);
    expect((await api.patch('/api/v1/vouchers/NOPE', { validationRuleIds: [unknown] })).status).toBe(404);
  });

  it('answers 404 for a missing voucher or campaign', async () => {
    const { api } = await service.newWorkspace();
    expect((await api.get('/api/v1/vouchers/NOPE')).status).toBe(404);
    expect((await api.patch('/api/v1/vouchers/NOPE', { active: false })).status).toBe(404);
    expect((await api.post('/api/v1/vouchers/NOPE/disable', {})).status).toBe(404);
    expect((await api.post('/api/v1/vouchers/NOPE/enable', {})).status).toBe(404);
    expect((await api.delete('/api/v1/vouchers/NOPE')).status).toBe(404);
    const res = await api.post('/api/v1/vouchers', { campaignId: randomUUID(), code: 'ORPHAN' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('vouchers: promotion tier rows', () => {
  it('keeps rows of kind TIER out of every voucher operation', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const campaign = await createCampaign(api, { type: 'PROMOTION', voucher: { discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' } });
    const voucher = await api.post('/api/v1/vouchers', { campaignId: campaign.id, code: 'REAL-CODE' });
    expect(voucher.status).toBe(201);
    const tierCode = await insertTierRow(workspaceId, campaign.id);
    // A tier row whose code would be a legal voucher code: only its kind hides it.
    const lookalike = await insertTierRow(workspaceId, campaign.id, 'TIER-LOOKALIKE');
    expect(tierCode).toMatch(/^tier:/);

    const codes = (res: { body: { data: Array<{ code: string }> } }) => res.body.data.map((v) => v.code);
    expect(codes(await api.get('/api/v1/vouchers'))).toEqual(['REAL-CODE']);
    expect(codes(await api.get(`/api/v1/vouchers?campaignId=${campaign.id}`))).toEqual(['REAL-CODE']);
    const page = await api.get(`/api/v1/vouchers?campaignId=${campaign.id}&limit=1`);
    expect(codes(page)).toEqual(['REAL-CODE']);
    expect(page.body.next).toBeUndefined();

    expect((await api.get(`/api/v1/vouchers/${lookalike}`)).status).toBe(404);
    expect((await api.patch(`/api/v1/vouchers/${lookalike}`, { active: false })).status).toBe(404);
    expect((await api.patch(`/api/v1/vouchers/${lookalike}`, { validationRuleIds: [randomUUID()] })).status).toBe(404);
    expect((await api.post(`/api/v1/vouchers/${lookalike}/disable`, {})).status).toBe(404);
    expect((await api.post(`/api/v1/vouchers/${lookalike}/enable`, {})).status).toBe(404);
    expect((await api.delete(`/api/v1/vouchers/${lookalike}`)).status).toBe(404);
    // `tier:` codes are not voucher codes at all (`:` is not a code character): refused before any lookup.
    for (const res of [
      await api.get(`/api/v1/vouchers/${tierCode}`),
      await api.patch(`/api/v1/vouchers/${tierCode}`, { active: false }),
      await api.delete(`/api/v1/vouchers/${tierCode}`),
    ]) {
      expect([400, 404]).toContain(res.status);
    }

    const { rows } = await service.pool.query('SELECT code, active FROM vouchers WHERE workspace_id = $1 AND kind = $2 ORDER BY code', [workspaceId, 'TIER']);
    expect(rows).toEqual([{ code: 'TIER-LOOKALIKE', active: true }, { code: tierCode, active: true }].sort((a, b) => (a.code < b.code ? -1 : 1)));
    // Taking the tier's code for a voucher is still a conflict: codes stay unique per workspace.
    expect((await api.post('/api/v1/vouchers', { campaignId: campaign.id, code: lookalike })).status).toBe(409);
  });
});

describe('vouchers: security', () => {
  it("answers another workspace's voucher code exactly as a missing one", async () => {
    const owner = await service.newWorkspace();
    const stranger = await service.newWorkspace();
    await owner.api.post('/api/v1/vouchers', { code: 'MINE', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' });
    const foreign = await stranger.api.get('/api/v1/vouchers/MINE');
    const missing = await stranger.api.get('/api/v1/vouchers/NEVER');
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await stranger.api.patch('/api/v1/vouchers/MINE', { active: false })).status).toBe(404);
    expect((await stranger.api.post('/api/v1/vouchers/MINE/disable', {})).status).toBe(404);
    expect((await stranger.api.delete('/api/v1/vouchers/MINE')).status).toBe(404);
    expect((await stranger.api.get('/api/v1/vouchers')).body.data).toEqual([]);
    expect((await owner.api.get('/api/v1/vouchers/MINE')).body.active).toBe(true);
  });

  it('lets each workspace hold the same code', async () => {
    const one = await service.newWorkspace();
    const two = await service.newWorkspace();
    const body = { code: 'SHARED', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' };
    expect((await one.api.post('/api/v1/vouchers', body)).status).toBe(201);
    expect((await two.api.post('/api/v1/vouchers', body)).status).toBe(201);
  });

  it("answers another workspace's campaign as missing when creating a voucher in it", async () => {
    const owner = await service.newWorkspace();
    const stranger = await service.newWorkspace();
    const campaign = await createCampaign(owner.api, { voucher: { discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' } });
    const res = await stranger.api.post('/api/v1/vouchers', { campaignId: campaign.id, code: 'SNEAK' });
    expect(res.status).toBe(404);
    expect((await owner.api.get('/api/v1/vouchers?campaignId=' + campaign.id)).body.data).toEqual([]);
  });

  it('lets a vouchers:read key read vouchers but not write them', async () => {
    const { api } = await service.newWorkspace();
    await api.post('/api/v1/vouchers', { code: 'READ-ME', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' });
    const key = await api.post('/api/v1/api-keys', { name: 'reader', scopes: ['vouchers:read'] });
    const reader = service.api(key.body.key);
    expect((await reader.get('/api/v1/vouchers/READ-ME')).status).toBe(200);
    expect((await reader.get('/api/v1/vouchers')).body.data).toHaveLength(1);
    const create = await reader.post('/api/v1/vouchers', { code: 'NO', type: 'LOYALTY_CARD' });
    expect(create.status).toBe(403);
    expect(create.body.code).toBe('forbidden');
    expect((await reader.patch('/api/v1/vouchers/READ-ME', { active: false })).status).toBe(403);
    expect((await reader.post('/api/v1/vouchers/READ-ME/disable', {})).status).toBe(403);
    expect((await reader.delete('/api/v1/vouchers/READ-ME')).status).toBe(403);
  });

  it('answers 401 without a key', async () => {
    expect((await service.api().get('/api/v1/vouchers/ANY')).status).toBe(401);
  });
});
