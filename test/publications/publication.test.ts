// Publications over real HTTP and a real PostgreSQL: a campaign's free code (or one made from its template) assigned
// to a customer, once-per-customer campaigns, races for codes, the voucher.published event, tenancy.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

function expectProblem(response: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ type: expect.any(String), title: expect.any(String), status, code });
}

const order = { amount: 4000, currency: 'EUR' };

async function createCampaign(api: ApiClient, body: Record<string, unknown> = {}): Promise<string> {
  const res = await api.post('/api/v1/campaigns', { name: 'Welcome', type: 'DISCOUNT_COUPONS', currency: 'EUR', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** Vouchers created one after the other, so the oldest is the first code. */
async function createCodes(api: ApiClient, campaignId: string, codes: string[], body: Record<string, unknown> = {}) {
  for (const code of codes) {
    const res = await api.post('/api/v1/vouchers', { code, campaignId, discount: { type: 'AMOUNT', amountOff: 500 }, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}

async function oncePerCustomer(campaignId: string) {
  await service.pool.query('UPDATE campaigns SET once_per_customer = true WHERE id = $1', [campaignId]);
}

const publish = (api: ApiClient, campaignId: string, customer: Record<string, unknown>, metadata?: Record<string, unknown>) =>
  api.post('/api/v1/publications', { campaignId, customer, ...(metadata ? { metadata } : {}) });

async function publishedEvents(workspaceId: string) {
  const { rows } = await service.pool.query<{ id: string; payload: Record<string, unknown>; created_at: Date }>(
    `SELECT id, payload, created_at FROM events WHERE workspace_id = $1 AND type = 'voucher.published' ORDER BY created_at`,
    [workspaceId],
  );
  return rows;
}

async function count(sql: string, values: unknown[]): Promise<number> {
  const { rows } = await service.pool.query<{ n: number }>(sql, values);
  return rows[0]!.n;
}

describe('publications: happy path', () => {
  it('assigns the oldest free code to the customer: only that customer can redeem it', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const campaignId = await createCampaign(api);
    await createCodes(api, campaignId, ['WELCOME-1', 'WELCOME-2']);
    // Loaded into the engine's cache before the publication: the cached copy must not outlive the assignment.
    expect((await api.post('/api/v1/vouchers/WELCOME-1/validate', { order })).body.valid).toBe(true);

    const res = await publish(api, campaignId, { sourceId: 'shop-7', email: 'ada@example.com' }, { channel: 'email' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      campaignId,
      customerId: expect.any(String),
      voucher: { id: expect.any(String), code: 'WELCOME-1' },
      metadata: { channel: 'email' },
      existing: false,
      createdAt: expect.stringMatching(/Z$/),
    });
    const customer = (await api.get(`/api/v1/customers/${res.body.customerId}`)).body;
    expect(customer).toMatchObject({ sourceId: 'shop-7', email: 'ada@example.com' });
    expect((await api.get('/api/v1/vouchers/WELCOME-1')).body.customerId).toBe(customer.id);
    expect((await api.get('/api/v1/vouchers/WELCOME-2')).body.customerId).toBeNull();

    // validate answers from the engine's memory: it sees the assignment only if the engine was told of it.
    const preview = await api.post('/api/v1/vouchers/WELCOME-1/validate', { order, customer: { sourceId: 'someone-else' } });
    expect(preview.body).toMatchObject({ valid: false, code: 'voucher_assigned_to_other_customer' });
    const redeem = (customerRef?: Record<string, unknown>) =>
      api.post('/api/v1/vouchers/WELCOME-1/redemption', { order, ...(customerRef ? { customer: customerRef } : {}) });
    expect((await redeem({ sourceId: 'someone-else' })).body).toMatchObject({ ok: false, code: 'voucher_assigned_to_other_customer' });
    expect((await redeem()).body).toMatchObject({ ok: false, code: 'customer_required' });
    expect((await redeem({ sourceId: 'shop-7' })).body).toMatchObject({ ok: true, redemption: { customerId: customer.id } });

    const events = await publishedEvents(workspaceId);
    expect(events.map((e) => e.payload)).toEqual([
      { publicationId: res.body.id, campaignId, customerId: customer.id, voucherCode: 'WELCOME-1' },
    ]);
    // now() is the transaction's start: one transaction wrote the publication, its event and the new customer.
    const { rows } = await service.pool.query<{ event: boolean; customer: boolean }>(
      `SELECT p.created_at = e.created_at AS event, p.created_at = c.created_at AS customer
       FROM publications p JOIN customers c ON c.id = p.customer_id, events e WHERE p.id = $1 AND e.id = $2`,
      [res.body.id, events[0]!.id],
    );
    expect(rows[0]).toEqual({ event: true, customer: true });
  });

  it('reads a publication and lists them newest first, by campaign and by customer', async () => {
    const { api } = await service.newWorkspace();
    const first = await createCampaign(api);
    const second = await createCampaign(api);
    await createCodes(api, first, ['F-1', 'F-2']);
    await createCodes(api, second, ['S-1']);
    const a = (await publish(api, first, { sourceId: 'a' })).body;
    const b = (await publish(api, first, { sourceId: 'b' })).body;
    const c = (await publish(api, second, { sourceId: 'a' })).body;
    const { existing: _, ...stored } = a;
    expect((await api.get(`/api/v1/publications/${a.id}`)).body).toEqual(stored);

    const ids = (res: { body: { data: Array<{ id: string }> } }) => res.body.data.map((p) => p.id);
    expect(ids(await api.get('/api/v1/publications'))).toEqual([c.id, b.id, a.id]);
    expect(ids(await api.get(`/api/v1/publications?campaignId=${first}`))).toEqual([b.id, a.id]);
    expect(ids(await api.get(`/api/v1/publications?customerId=${a.customerId}`))).toEqual([c.id, a.id]);
    expect(ids(await api.get(`/api/v1/publications?customerId=${a.customerId}&campaignId=${second}`))).toEqual([c.id]);
    const page = await api.get('/api/v1/publications?limit=2');
    expect(ids(page)).toEqual([c.id, b.id]);
    const rest = await api.get(`/api/v1/publications?limit=2&cursor=${encodeURIComponent(page.body.next)}`);
    expect(ids(rest)).toEqual([a.id]);
    expect(rest.body.data[0]).toEqual(stored);
  });

  it('passes over codes that are disabled, assigned, used up or expired', async () => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api);
    const owner = (await api.post('/api/v1/customers', { sourceId: 'owner' })).body;
    await createCodes(api, campaignId, ['OFF'], { active: false });
    await createCodes(api, campaignId, ['MINE'], { customerId: owner.id });
    await createCodes(api, campaignId, ['USED'], { redemptionLimit: 1 });
    expect((await api.post('/api/v1/vouchers/USED/redemption', { order })).body.ok).toBe(true);
    await createCodes(api, campaignId, ['OLD'], { expirationDate: '2020-01-01T00:00:00.000Z' });
    await createCodes(api, campaignId, ['FREE']);
    expect((await publish(api, campaignId, { sourceId: 'new' })).body.voucher.code).toBe('FREE');
    expectProblem(await publish(api, campaignId, { sourceId: 'next' }), 409, 'conflict');
  });

  it('makes a code from the voucher template when no free code is left', async () => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, {
      voucher: { discount: { type: 'PERCENT', percentOff: 10 }, redemptionLimit: 1, codeConfig: { prefix: 'HELLO-', length: 6 } },
    });
    await createCodes(api, campaignId, ['HELLO-FIRST']);
    expect((await publish(api, campaignId, { sourceId: 'one' })).body.voucher.code).toBe('HELLO-FIRST');
    const generated = await publish(api, campaignId, { sourceId: 'two' });
    expect(generated.status).toBe(201);
    expect(generated.body.voucher.code).toMatch(/^HELLO-[A-Z2-9]{6}$/);
    const voucher = (await api.get(`/api/v1/vouchers/${generated.body.voucher.code}`)).body;
    expect(voucher).toMatchObject({
      id: generated.body.voucher.id,
      campaignId,
      type: 'DISCOUNT',
      discount: { type: 'PERCENT', percentOff: 10 },
      redemption: { limit: 1, redeemedCount: 0 },
      customerId: generated.body.customerId,
    });
    const redeem = (customer: Record<string, unknown>) => api.post(`/api/v1/vouchers/${voucher.code}/redemption`, { order, customer });
    expect((await redeem({ sourceId: 'one' })).body.code).toBe('voucher_assigned_to_other_customer');
    expect((await redeem({ sourceId: 'two' })).body).toMatchObject({ ok: true, redemption: { amount: 400 } });
  });

  it('makes gift cards from a gift template with their first ledger entry', async () => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { type: 'GIFT_VOUCHERS', voucher: { gift: { amount: 2500, currency: 'EUR' } } });
    const res = await publish(api, campaignId, { sourceId: 'gifted' });
    expect(res.status).toBe(201);
    const card = (await api.get(`/api/v1/vouchers/${res.body.voucher.code}`)).body;
    expect(card).toMatchObject({ type: 'GIFT_CARD', gift: { amount: 2500, balance: 2500, currency: 'EUR' }, customerId: res.body.customerId });
    const ledger = (await api.get(`/api/v1/vouchers/${card.code}/transactions`)).body.data;
    expect(ledger).toMatchObject([{ type: 'CREDITS_ADDED', amount: 2500 }]);
  });

  it('gives a customer the same code again on a once-per-customer campaign, and a new code otherwise', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const once = await createCampaign(api);
    const many = await createCampaign(api);
    await oncePerCustomer(once);
    await createCodes(api, once, ['ONCE-1', 'ONCE-2']);
    await createCodes(api, many, ['MANY-1', 'MANY-2']);

    const first = await publish(api, once, { sourceId: 'repeat' }, { try: 1 });
    const customerId = first.body.customerId;
    for (const ref of [{ sourceId: 'repeat' }, { id: customerId }]) {
      const again = await publish(api, once, ref, { try: 2 });
      expect(again.status).toBe(201);
      expect(again.body).toEqual({ ...first.body, existing: true });
    }
    expect((await publish(api, once, { sourceId: 'other' })).body.voucher.code).toBe('ONCE-2');

    const a = await publish(api, many, { id: customerId });
    const b = await publish(api, many, { id: customerId });
    expect([a.body.voucher.code, b.body.voucher.code]).toEqual(['MANY-1', 'MANY-2']);
    expect([a.body.existing, b.body.existing]).toEqual([false, false]);
    expect(await publishedEvents(workspaceId)).toHaveLength(4);
  });
});

describe('publications: races', () => {
  it('30 concurrent publications of one new customer on a once-per-customer campaign give one code', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: { discount: { type: 'AMOUNT', amountOff: 100 } } });
    await oncePerCustomer(campaignId);
    await createCodes(api, campaignId, ['RACE-FREE-1', 'RACE-FREE-2']);
    const results = await Promise.all(Array.from({ length: 30 }, () => publish(api, campaignId, { sourceId: 'racer' })));
    const odd = results.filter((r) => r.status !== 201).map((r) => r.body);
    expect(odd, JSON.stringify(odd.slice(0, 3))).toEqual([]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.voucher.code))).toEqual(new Set(['RACE-FREE-1']));
    expect(results.filter((r) => !r.body.existing)).toHaveLength(1);
    expect(await count('SELECT count(*)::int AS n FROM publications WHERE campaign_id = $1', [campaignId])).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM vouchers WHERE campaign_id = $1 AND customer_id IS NOT NULL', [campaignId])).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM vouchers WHERE campaign_id = $1', [campaignId])).toBe(2);
    expect(await count("SELECT count(*)::int AS n FROM customers WHERE workspace_id = $1 AND source_id = 'racer'", [workspaceId])).toBe(1);
    expect(await publishedEvents(workspaceId)).toHaveLength(1);
  });

  it('30 concurrent publications making codes from the template for one customer of a once-per-customer campaign make one', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const campaignId = await createCampaign(api, { voucher: { discount: { type: 'AMOUNT', amountOff: 100 } } });
    await oncePerCustomer(campaignId);
    const customer = (await api.post('/api/v1/customers', { sourceId: 'known-racer' })).body;
    const results = await Promise.all(Array.from({ length: 30 }, () => publish(api, campaignId, { id: customer.id })));
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(201));
    expect(new Set(results.map((r) => r.body.voucher.code)).size).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM vouchers WHERE campaign_id = $1', [campaignId])).toBe(1);
    expect(await publishedEvents(workspaceId)).toHaveLength(1);
  });

  it('30 customers publishing at once on 30 free codes get 30 distinct codes, each assigned once; the 31st gets 409', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const campaignId = await createCampaign(api);
    const codes = Array.from({ length: 30 }, (_, i) => `POOL-${String(i).padStart(2, '0')}`);
    await createCodes(api, campaignId, codes);
    const results = await Promise.all(codes.map((_, i) => publish(api, campaignId, { sourceId: `customer-${i}` })));
    const odd = results.filter((r) => r.status !== 201).map((r) => r.body);
    expect(odd, JSON.stringify(odd.slice(0, 3))).toEqual([]);
    expect(new Set(results.map((r) => r.body.voucher.code))).toEqual(new Set(codes));
    expect(new Set(results.map((r) => r.body.customerId)).size).toBe(30);
    const { rows } = await service.pool.query<{ code: string; customer_id: string; published_to: string[] }>(
      `SELECT v.code, v.customer_id, array_agg(p.customer_id) AS published_to
       FROM vouchers v JOIN publications p ON p.voucher_id = v.id WHERE v.campaign_id = $1 GROUP BY v.code, v.customer_id`,
      [campaignId],
    );
    expect(rows).toHaveLength(30);
    for (const row of rows) expect(row.published_to).toEqual([row.customer_id]);
    for (const r of results) expect(rows.find((row) => row.code === r.body.voucher.code)?.customer_id).toBe(r.body.customerId);

    const late = await publish(api, campaignId, { sourceId: 'customer-30' });
    expectProblem(late, 409, 'conflict');
    expect(late.body.detail).toBe('no codes left in this campaign');
    expect(await publishedEvents(workspaceId)).toHaveLength(30);
    // The refused publication's new customer was rolled back with it.
    expect((await api.get('/api/v1/customers?sourceId=customer-30')).body.data).toEqual([]);
  });
});

describe('publications: errors', () => {
  it('answers 409 for a campaign without codes or template, a PROMOTION campaign, and an inactive or expired one', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const empty = await createCampaign(api);
    const none = await publish(api, empty, { sourceId: 'c' });
    expectProblem(none, 409, 'conflict');
    expect(none.body.detail).toBe('no codes left in this campaign');

    const promotion = await createCampaign(api, { type: 'PROMOTION' });
    expectProblem(await publish(api, promotion, { sourceId: 'c' }), 409, 'conflict');
    const inactive = await createCampaign(api, { active: false, voucher: { discount: { type: 'AMOUNT', amountOff: 1 } } });
    expectProblem(await publish(api, inactive, { sourceId: 'c' }), 409, 'conflict');
    const expired = await createCampaign(api, { expirationDate: '2020-01-01T00:00:00.000Z', voucher: { discount: { type: 'AMOUNT', amountOff: 1 } } });
    expectProblem(await publish(api, expired, { sourceId: 'c' }), 409, 'conflict');
    expect(await publishedEvents(workspaceId)).toEqual([]);
    expect(await count('SELECT count(*)::int AS n FROM publications WHERE workspace_id = $1', [workspaceId])).toBe(0);
  });

  it('answers 409 when the template cannot make a voucher', async () => {
    const { api } = await service.newWorkspace();
    const noDiscount = await createCampaign(api, { voucher: { redemptionLimit: 1 } });
    expectProblem(await publish(api, noDiscount, { sourceId: 'c' }), 409, 'conflict');
  });

  it('answers 404 for an unknown campaign, customer id or email', async () => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api);
    await createCodes(api, campaignId, ['X-1']);
    expectProblem(await publish(api, randomUUID(), { sourceId: 'c' }), 404, 'not_found');
    expectProblem(await publish(api, campaignId, { id: randomUUID() }), 404, 'not_found');
    expectProblem(await publish(api, campaignId, { email: 'nobody@example.com' }), 404, 'not_found');
    expectProblem(await api.get(`/api/v1/publications/${randomUUID()}`), 404, 'not_found');
    expect((await api.get('/api/v1/vouchers/X-1')).body.customerId).toBeNull();
  });

  it('refuses malformed bodies and queries with 400, never 500', async () => {
    const { api } = await service.newWorkspace();
    const campaignId = await createCampaign(api);
    const bad: Array<Record<string, unknown>> = [
      {},
      { campaignId },
      { customer: { sourceId: 'c' } },
      { campaignId: 'nope', customer: { sourceId: 'c' } },
      { campaignId, customer: 'c' },
      { campaignId, customer: {} },
      { campaignId, customer: { id: 'nope' } },
      { campaignId, customer: { sourceId: '' } },
      { campaignId, customer: { sourceId: 'c' }, metadata: 'x' },
    ];
    for (const body of bad) expectProblem(await api.post('/api/v1/publications', body), 400, 'invalid_request');
    for (const query of ['campaignId=nope', 'customerId=1', 'limit=0', 'cursor=forged']) {
      expectProblem(await api.get(`/api/v1/publications?${query}`), 400, 'invalid_request');
    }
    expectProblem(await api.get('/api/v1/publications/nope'), 400, 'invalid_request');
  });
});

describe('publications: security', () => {
  it("keeps workspaces apart: another workspace's campaign, customer and publication are 404", async () => {
    const owner = await service.newWorkspace();
    const stranger = await service.newWorkspace();
    const campaignId = await createCampaign(owner.api);
    await createCodes(owner.api, campaignId, ['PRIVATE-1', 'PRIVATE-2']);
    const mine = (await publish(owner.api, campaignId, { sourceId: 'me' })).body;

    expectProblem(await publish(stranger.api, campaignId, { sourceId: 'me' }), 404, 'not_found');
    const strangerCampaign = await createCampaign(stranger.api);
    await createCodes(stranger.api, strangerCampaign, ['THEIRS-1']);
    expectProblem(await publish(stranger.api, strangerCampaign, { id: mine.customerId }), 404, 'not_found');
    const [foreign, random] = await Promise.all([
      stranger.api.get(`/api/v1/publications/${mine.id}`),
      stranger.api.get(`/api/v1/publications/${randomUUID()}`),
    ]);
    expectProblem(foreign, 404, 'not_found');
    expect(foreign.body).toEqual(random.body);
    expect((await stranger.api.get('/api/v1/publications')).body).toEqual({ data: [] });
    expect((await stranger.api.get(`/api/v1/publications?campaignId=${campaignId}`)).body).toEqual({ data: [] });
    expect((await owner.api.get('/api/v1/vouchers/PRIVATE-2')).body.customerId).toBeNull();
  });

  it('lets a vouchers:read key read but not publish, and refuses other groups and anonymous requests', async () => {
    const { api } = await service.newWorkspace(['vouchers:read']);
    expectProblem(await api.post('/api/v1/publications', { campaignId: randomUUID(), customer: { sourceId: 'c' } }), 403, 'forbidden');
    expectProblem(await api.post('/api/v1/publications', {}), 403, 'forbidden');
    expect((await api.get('/api/v1/publications')).status).toBe(200);
    const other = await service.newWorkspace(['customers:write', 'campaigns:write']);
    expectProblem(await other.api.get('/api/v1/publications'), 403, 'forbidden');
    expectProblem(await other.api.post('/api/v1/publications', { campaignId: randomUUID(), customer: { sourceId: 'c' } }), 403, 'forbidden');
    expectProblem(await service.api().get('/api/v1/publications'), 401, 'unauthorized');
  });
});
