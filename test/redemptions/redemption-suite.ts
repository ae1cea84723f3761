// The hot operations' behaviour, as one suite run twice: through the lean hot-path dispatcher and through express
// alone (hot-path.test.ts, express-path.test.ts). Both must answer identically.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

const order = (amount: number, extra: Record<string, unknown> = {}) => ({ amount, currency: 'EUR', ...extra });

export function redemptionSuite(hotPath: boolean) {
  let service: TestService;
  let api: ApiClient;
  let workspaceId: string;
  beforeAll(async () => {
    service = await startTestService({ hotPath });
    ({ api, workspaceId } = await service.newWorkspace());
  });
  afterAll(async () => service?.close());

  const code = (prefix = 'V') => `${prefix}-${randomUUID().slice(0, 8)}`;
  async function voucher(body: Record<string, unknown>) {
    // money amounts need a currency: the voucher's own unless its campaign names one
    const currency = body.campaignId === undefined ? { currency: 'EUR' } : {};
    const res = await api.post('/api/v1/vouchers', { code: code(), type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, ...currency, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { code: string; id: string };
  }
  async function campaign(body: Record<string, unknown>) {
    // the vouchers made in it take AMOUNT discounts (money): the campaign names their currency unless a test gives one
    const res = await api.post('/api/v1/campaigns', { name: 'C', type: 'DISCOUNT_COUPONS', currency: 'EUR', ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string };
  }
  const validate = (c: string, body: unknown) => api.post(`/api/v1/vouchers/${encodeURIComponent(c)}/validate`, body);
  const redeem = (c: string, body: unknown, headers?: Record<string, string>) => api.post(`/api/v1/vouchers/${encodeURIComponent(c)}/redemption`, body, headers);
  const stack = (body: unknown) => api.post('/api/v1/redemptions/stack', body);

  describe('discount math', () => {
    it.each([
      [{ type: 'PERCENT', percentOff: 10 }, 1005, 101],
      [{ type: 'PERCENT', percentOff: 12.5, amountLimit: 100 }, 10_000, 100],
      [{ type: 'AMOUNT', amountOff: 700 }, 500, 500],
      [{ type: 'FIXED', fixedAmount: 3000 }, 5000, 2000],
      [{ type: 'FIXED', fixedAmount: 5000 }, 5000, 0],
    ])('%o on %i gives %i', async (discount, amount, expected) => {
      const v = await voucher({ discount });
      const res = await validate(v.code, { order: order(amount) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ valid: true, discount: { type: discount.type, amount: expected }, order: { amount, discountAmount: expected, giftAmount: 0, totalAmount: amount - expected } });
    });

    it('UNIT takes the unit price of the named product and splits item shares exactly', async () => {
      const v = await voucher({ discount: { type: 'UNIT', unitOff: 1, productId: 'shoe' } });
      const res = await validate(v.code, {
        order: order(9000, { items: [{ productId: 'sock', quantity: 2, price: 500 }, { productId: 'shoe', quantity: 2, price: 4000 }] }),
      });
      expect(res.body.discount.amount).toBe(4000);
      expect(res.body.order.items.map((i: { discountAmount: number }) => i.discountAmount)).toEqual([0, 4000]);
    });

    it('spreads a discount over the items so the shares add up to the total', async () => {
      const v = await voucher({ discount: { type: 'PERCENT', percentOff: 33 } });
      const res = await validate(v.code, { order: order(1000, { items: [{ sku: 'a', quantity: 1, price: 333 }, { sku: 'b', quantity: 1, price: 333 }, { sku: 'c', quantity: 1, price: 334 }] }) });
      const shares = res.body.order.items.map((i: { discountAmount: number }) => i.discountAmount);
      expect(shares.reduce((a: number, b: number) => a + b, 0)).toBe(330);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    });
  });

  describe('explanation codes', () => {
    it('voucher_not_found, also for codes no voucher could have', async () => {
      for (const c of ['NOPE-123', 'with space', 'ÄÖÜ']) {
        const res = await validate(c, { order: order(100) });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ valid: false, code: 'voucher_not_found', explanations: [{ code: 'voucher_not_found' }] });
        expect((await redeem(c, { order: order(100) })).body).toMatchObject({ ok: false, code: 'voucher_not_found' });
      }
    });

    it('campaign_inactive, voucher_disabled, voucher_expired, voucher_not_started', async () => {
      const inactive = await campaign({ active: false });
      const a = await voucher({ campaignId: inactive.id });
      expect((await validate(a.code, { order: order(1000) })).body.code).toBe('campaign_inactive');
      const ended = await campaign({ expirationDate: '2020-01-01T00:00:00.000Z' });
      expect((await validate((await voucher({ campaignId: ended.id })).code, { order: order(1000) })).body.code).toBe('campaign_inactive');
      expect((await validate((await voucher({ active: false })).code, { order: order(1000) })).body.code).toBe('voucher_disabled');
      expect((await redeem((await voucher({ expirationDate: '2020-01-01T00:00:00.000Z' })).code, { order: order(1000) })).body.code).toBe('voucher_expired');
      expect((await redeem((await voucher({ startDate: '2099-01-01T00:00:00.000Z' })).code, { order: order(1000) })).body.code).toBe('voucher_not_started');
    });

    it('order_required, currency_mismatch (voucher or campaign currency)', async () => {
      const v = await voucher({ currency: 'EUR' });
      expect((await redeem(v.code, {})).body.code).toBe('order_required');
      expect((await redeem(v.code, { order: { amount: 100, currency: 'USD' } })).body).toMatchObject({ ok: false, code: 'currency_mismatch' });
      const usd = await campaign({ currency: 'USD' });
      const w = await voucher({ campaignId: usd.id });
      expect((await validate(w.code, { order: order(100) })).body.code).toBe('currency_mismatch');
    });

    it('redemption_limit_reached once the limit is used', async () => {
      const v = await voucher({ redemptionLimit: 1 });
      expect((await redeem(v.code, { order: order(1000) })).body.ok).toBe(true);
      expect((await redeem(v.code, { order: order(1000) })).body).toMatchObject({ ok: false, code: 'redemption_limit_reached' });
      expect((await validate(v.code, { order: order(1000) })).body.code).toBe('redemption_limit_reached');
    });

    it('customer_required, per_user_redemption_limit_reached, voucher_assigned_to_other_customer, customer_not_found', async () => {
      const v = await voucher({ perCustomerLimit: 1 });
      expect((await redeem(v.code, { order: order(1000) })).body.code).toBe('customer_required');
      const customer = { sourceId: `cust-${randomUUID()}` };
      expect((await redeem(v.code, { order: order(1000), customer })).body.ok).toBe(true);
      expect((await redeem(v.code, { order: order(1000), customer })).body.code).toBe('per_user_redemption_limit_reached');
      expect((await redeem(v.code, { order: order(1000), customer: { sourceId: `other-${randomUUID()}` } })).body.ok).toBe(true);
      const owner = await api.post('/api/v1/customers', { sourceId: `owner-${randomUUID()}` });
      const assigned = await voucher({ customerId: owner.body.id });
      expect((await redeem(assigned.code, { order: order(1000), customer: { sourceId: `x-${randomUUID()}` } })).body.code).toBe('voucher_assigned_to_other_customer');
      expect((await redeem(assigned.code, { order: order(1000), customer: { id: owner.body.id } })).body.ok).toBe(true);
      expect((await redeem(assigned.code, { order: order(1000), customer: { id: randomUUID() } })).body.code).toBe('customer_not_found');
    });

    it('gift cards: gift_balance_insufficient, gift_balance_zero, and taking what the order needs', async () => {
      const g = await voucher({ type: 'GIFT_CARD', discount: undefined, gift: { amount: 1000, currency: 'EUR' } });
      expect((await redeem(g.code, { amount: 1500 })).body).toMatchObject({ ok: false, code: 'gift_balance_insufficient' });
      expect((await redeem(g.code, {})).body.code).toBe('order_required');
      const first = await redeem(g.code, { order: order(600) });
      expect(first.body).toMatchObject({ ok: true, redemption: { amount: 600 }, order: { giftAmount: 600, discountAmount: 0, totalAmount: 0 } });
      const second = await redeem(g.code, { order: order(600) });
      expect(second.body).toMatchObject({ ok: true, redemption: { amount: 400 }, order: { totalAmount: 200 } });
      expect((await validate(g.code, { order: order(100) })).body.code).toBe('gift_balance_zero');
      const ledger = await api.get(`/api/v1/vouchers/${g.code}/transactions`);
      expect(ledger.body.data.map((e: { type: string; amount: number; balanceAfter: number }) => [e.type, e.amount, e.balanceAfter])).toEqual([
        ['REDEMPTION', -400, 0],
        ['REDEMPTION', -600, 400],
        ['CREDITS_ADDED', 1000, 1000],
      ]);
    });
  });

  describe('redemption records, rollback and events', () => {
    it('records the redemption, its event, and rolls it back once', async () => {
      const g = await voucher({ type: 'GIFT_CARD', discount: undefined, gift: { amount: 1000, currency: 'EUR' }, redemptionLimit: 1 });
      const res = await redeem(g.code, { order: order(300, { id: 'order-1' }), customer: { sourceId: `c-${randomUUID()}` }, metadata: { channel: 'web' } });
      expect(res.body.ok).toBe(true);
      const id = res.body.redemption.id;
      const got = await api.get(`/api/v1/redemptions/${id}`);
      expect(got.body).toMatchObject({ id, voucherCode: g.code, amount: 300, status: 'SUCCEEDED', orderId: 'order-1', metadata: { channel: 'web' } });
      const events = await service.pool.query("SELECT type, payload FROM events WHERE workspace_id = $1 AND payload->>'redemptionId' = $2", [workspaceId, id]);
      expect(events.rows).toEqual([{ type: 'voucher.redeemed', payload: expect.objectContaining({ redemptionId: id, voucherCode: g.code, amount: 300, orderId: 'order-1' }) }]);

      const rolled = await api.post(`/api/v1/redemptions/${id}/rollback`, { reason: 'returned' });
      expect(rolled.body).toMatchObject({ ok: true, rollback: { redemptionId: id, voucherCode: g.code, amount: 300 } });
      expect((await api.post(`/api/v1/redemptions/${id}/rollback`, {})).body).toMatchObject({ ok: false, code: 'redemption_already_rolled_back' });
      expect((await api.get(`/api/v1/redemptions/${id}`)).body.status).toBe('ROLLED_BACK');
      // The use and the credits are back.
      expect((await redeem(g.code, { order: order(1000) })).body).toMatchObject({ ok: true, redemption: { amount: 1000 } });
      const types = await service.pool.query("SELECT type FROM events WHERE workspace_id = $1 AND type = 'voucher.redeemed.rolled_back' AND payload->>'redemptionId' = $2", [workspaceId, id]);
      expect(types.rowCount).toBe(1);
      expect((await api.post(`/api/v1/redemptions/${randomUUID()}/rollback`, {})).status).toBe(404);
      const listed = await api.get(`/api/v1/redemptions?voucherCode=${g.code}&status=ROLLED_BACK`);
      expect(listed.body.data.map((r: { id: string }) => r.id)).toEqual([id]);
    });

    it('creates an unknown customer on redemption, with customer.created', async () => {
      const v = await voucher({});
      const sourceId = `new-${randomUUID()}`;
      const res = await redeem(v.code, { order: order(1000), customer: { sourceId, email: 'new@example.com' } });
      expect(res.body.redemption.customerId).toEqual(expect.any(String));
      const created = await service.pool.query("SELECT payload FROM events WHERE type = 'customer.created' AND payload->>'sourceId' = $1", [sourceId]);
      expect(created.rows[0].payload.customerId).toBe(res.body.redemption.customerId);
    });

    it('a CRUD change takes effect on the very next redemption', async () => {
      const v = await voucher({ redemptionLimit: 5 });
      expect((await redeem(v.code, { order: order(1000) })).body.ok).toBe(true);
      expect((await api.post(`/api/v1/vouchers/${v.code}/disable`)).status).toBe(200);
      expect((await redeem(v.code, { order: order(1000) })).body.code).toBe('voucher_disabled');
      await api.post(`/api/v1/vouchers/${v.code}/enable`);
      expect((await api.patch(`/api/v1/vouchers/${v.code}`, { redemptionLimit: 1 })).status).toBe(200);
      expect((await redeem(v.code, { order: order(1000) })).body.code).toBe('redemption_limit_reached');
      const c = await campaign({});
      const w = await voucher({ campaignId: c.id });
      expect((await redeem(w.code, { order: order(1000) })).body.ok).toBe(true);
      await api.patch(`/api/v1/campaigns/${c.id}`, { active: false });
      expect((await redeem(w.code, { order: order(1000) })).body.code).toBe('campaign_inactive');
      await api.delete(`/api/v1/campaigns/${c.id}`);
      expect((await redeem(w.code, { order: order(1000) })).body.code).toBe('voucher_not_found');
      const g = await voucher({ type: 'GIFT_CARD', discount: undefined, gift: { amount: 100, currency: 'EUR' } });
      expect((await redeem(g.code, { amount: 100 })).body.ok).toBe(true);
      const topUp = await api.post(`/api/v1/vouchers/${g.code}/balance`, { amount: 250 });
      expect(topUp.body).toMatchObject({ balance: 250, entry: { type: 'CREDITS_ADDED', amount: 250, balanceAfter: 250 } });
      expect((await redeem(g.code, { amount: 250 })).body.ok).toBe(true);
      expect((await api.post(`/api/v1/vouchers/${g.code}/balance`, { amount: -1, type: 'ADJUSTMENT' })).status).toBe(409);
      expect((await redeem('LATE', { order: order(1000) })).body.code).toBe('voucher_not_found');
      await api.post('/api/v1/vouchers', { code: 'LATE', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' });
      expect((await redeem('LATE', { order: order(1000) })).body.ok).toBe(true);
    });
  });

  describe('idempotency', () => {
    it('replays the outcome (refusals too) and refuses another body with 409', async () => {
      const v = await voucher({ redemptionLimit: 1 });
      const key = randomUUID();
      const first = await redeem(v.code, { order: order(1000), idempotencyKey: key });
      const again = await redeem(v.code, { order: order(1000), idempotencyKey: key });
      expect(again.body).toEqual({ ...first.body, idempotent: true });
      const conflict = await redeem(v.code, { order: order(999), idempotencyKey: key });
      expect(conflict.status).toBe(409);
      expect(conflict.body.code).toBe('idempotency_conflict');
      const refusedKey = randomUUID();
      const refused = await redeem(v.code, { order: order(1000) }, { 'idempotency-key': refusedKey });
      expect(refused.body.code).toBe('redemption_limit_reached');
      expect((await redeem(v.code, { order: order(1000), idempotencyKey: refusedKey })).body).toEqual({ ...refused.body, idempotent: true });
      // The path is part of the request: the same key on another code is another body.
      const w = await voucher({});
      expect((await redeem(w.code, { order: order(1000), idempotencyKey: key })).status).toBe(409);
    });
  });

  describe('stack redemption', () => {
    it('applies vouchers in priority order on what is left, capped, atomically', async () => {
      const low = await voucher({ discount: { type: 'AMOUNT', amountOff: 1000 }, priority: 1 });
      const high = await voucher({ discount: { type: 'PERCENT', percentOff: 50 }, priority: 10, maxDiscount: 3000 });
      const gift = await voucher({ type: 'GIFT_CARD', discount: undefined, gift: { amount: 100_000, currency: 'EUR' }, priority: 0 });
      const res = await stack({ vouchers: [{ code: low.code }, { code: high.code }, { code: gift.code }], order: order(10_000), idempotencyKey: randomUUID() });
      expect(res.body).toMatchObject({
        ok: true,
        results: [
          { voucherCode: low.code, ok: true, amount: 1000, priority: 1 },
          { voucherCode: high.code, ok: true, amount: 3000, priority: 10 },
          { voucherCode: gift.code, ok: true, amount: 6000, priority: 0 },
        ],
        order: { amount: 10_000, discountAmount: 4000, giftAmount: 6000, totalAmount: 0 },
      });
      expect(res.body.results.every((r: { redemptionId?: string }) => typeof r.redemptionId === 'string')).toBe(true);
      const stackEvents = await service.pool.query("SELECT payload FROM events WHERE type = 'voucher.stack.redeemed' AND payload->>'stackId' = $1", [res.body.stackId]);
      expect(stackEvents.rows[0].payload.redemptions).toHaveLength(3);
    });

    it('fails the whole batch on the first failure, skipping the others and recording nothing', async () => {
      const ok1 = await voucher({ priority: 5 });
      const spent = await voucher({ redemptionLimit: 0, priority: 3 });
      const ok2 = await voucher({ priority: 1 });
      const res = await stack({ vouchers: [{ code: ok2.code }, { code: spent.code }, { code: ok1.code }], order: order(10_000), idempotencyKey: randomUUID() });
      expect(res.body).toMatchObject({
        ok: false,
        code: 'redemption_limit_reached',
        results: [
          { voucherCode: ok2.code, ok: false, code: 'skipped' },
          { voucherCode: spent.code, ok: false, code: 'redemption_limit_reached' },
          { voucherCode: ok1.code, ok: false, code: 'skipped' },
        ],
      });
      expect(res.body.results.some((r: { redemptionId?: string }) => r.redemptionId)).toBe(false);
      const recorded = await service.pool.query('SELECT count(*)::int AS n FROM redemptions WHERE voucher_code = ANY($1)', [[ok1.code, ok2.code]]);
      expect(recorded.rows[0].n).toBe(0);
    });

    it('exclusive_conflict, duplicate_voucher, stack_limit_exceeded; a lone exclusive voucher is fine', async () => {
      const plain = await voucher({});
      const exclusive = await voucher({ exclusive: true, priority: 2 });
      expect((await stack({ vouchers: [{ code: plain.code }, { code: exclusive.code }], order: order(5000), idempotencyKey: randomUUID() })).body).toMatchObject({
        ok: false,
        code: 'exclusive_conflict',
        results: [{ code: 'skipped' }, { code: 'exclusive_conflict' }],
      });
      expect((await stack({ vouchers: [{ code: exclusive.code }], order: order(5000), idempotencyKey: randomUUID() })).body.ok).toBe(true);
      expect((await stack({ vouchers: [{ code: plain.code }, { code: plain.code }], order: order(5000), idempotencyKey: randomUUID() })).body).toMatchObject({
        ok: false,
        code: 'duplicate_voucher',
        results: [{ code: 'skipped' }, { code: 'duplicate_voucher' }],
      });
      const six = await Promise.all(Array.from({ length: 6 }, () => voucher({})));
      expect((await stack({ vouchers: six.map((v) => ({ code: v.code })), order: order(100_000), idempotencyKey: randomUUID() })).body.code).toBe('stack_limit_exceeded');
      expect((await stack({ vouchers: [], order: order(1), idempotencyKey: randomUUID() })).status).toBe(400);
      expect((await stack({ vouchers: [{ code: plain.code }], order: order(1) })).status).toBe(400);
    });

    it('a voucher with nothing left to discount is still redeemed with amount 0; replays keep the outcome', async () => {
      const big = await voucher({ discount: { type: 'AMOUNT', amountOff: 10_000 }, priority: 2 });
      const small = await voucher({ priority: 1 });
      const body = { vouchers: [{ code: small.code }, { code: big.code }], order: order(5000), idempotencyKey: randomUUID() };
      const res = await stack(body);
      expect(res.body.results.map((r: { amount: number }) => r.amount)).toEqual([0, 5000]);
      expect((await stack(body)).body).toEqual({ ...res.body, idempotent: true });
      expect((await stack({ ...body, order: order(5001) })).status).toBe(409);
    });
  });

  describe('transport errors on the hot routes', () => {
    it('answers 401, 403, 400, 415 and 413 as problem+json', async () => {
      const v = await voucher({});
      const anonymous = service.api();
      expect((await anonymous.post(`/api/v1/vouchers/${v.code}/redemption`, { order: order(1) })).body).toMatchObject({ status: 401, code: 'unauthorized' });
      const reader = (await service.newWorkspace(['vouchers:read'])).api;
      expect((await reader.post(`/api/v1/vouchers/${v.code}/redemption`, { order: order(1) })).body).toMatchObject({ status: 403, code: 'forbidden' });
      const bad = await redeem(v.code, { order: { amount: -1, currency: 'EUR' } });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(bad.body.code).toBe('invalid_request');
      expect((await api.request('POST', `/api/v1/vouchers/${v.code}/redemption`, { rawBody: '{"order":', headers: { 'content-type': 'application/json' } })).status).toBe(400);
      expect((await api.request('POST', `/api/v1/vouchers/${v.code}/redemption`, { rawBody: 'order=1', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
      expect((await api.request('POST', `/api/v1/vouchers/${v.code}/redemption`, { rawBody: JSON.stringify({ metadata: { x: 'y'.repeat(1_100_000) } }), headers: { 'content-type': 'application/json' } })).status).toBe(413);
      expect((await api.request('POST', `/api/v1/vouchers/${v.code}/validate`)).status).toBe(400);
    });
  });
}
