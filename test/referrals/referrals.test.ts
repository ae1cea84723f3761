// Referral programs over real HTTP, the real engine and a real PostgreSQL: one code per referrer, conversions decided
// in the redemption's own step (customer_required, referral_self_use, referee_not_new, referee_already_referred,
// referrer_limit_reached), the cap and the one-conversion rule under races, conversions in stacks, reversal on rollback.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { reactToNextReferralEvent } from '../../src/orchestration/index.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

/** Runs the worker's referral reactions in-process until the inbox is empty. */
async function drainReferrals(): Promise<void> {
  while (await reactToNextReferralEvent(service.pool));
}

const order = (amount = 5_000) => ({ id: `o-${randomUUID()}`, amount, currency: 'EUR' });

/** A reward of the catalog that issues nothing by itself (a thank-you the shop hands over). */
async function thankYouReward(api: ApiClient): Promise<string> {
  return (await api.create('/api/v1/rewards', { name: 'Thank-you mug', type: 'MATERIAL' })).id;
}

async function referralProgram(api: ApiClient, referral: Record<string, unknown> = {}): Promise<string> {
  const program = await api.create('/api/v1/campaigns', {
    name: `Refer a friend ${randomUUID().slice(0, 6)}`,
    type: 'REFERRAL_PROGRAM',
    currency: 'EUR',
    voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 } },
    referral: { confirmOn: 'REDEMPTION', referrerRewards: referral.referrerRewards ?? [{ rewardId: await thankYouReward(api) }], ...referral },
  });
  return program.id;
}

async function codeFor(api: ApiClient, programId: string, customer: Record<string, unknown>): Promise<string> {
  const res = await api.post(`/api/v1/referrals/programs/${programId}/codes`, { customer });
  expect([200, 201], JSON.stringify(res.body)).toContain(res.status);
  return res.body.code;
}

const redeem = (api: ApiClient, code: string, customer?: Record<string, unknown>) =>
  api.post(`/api/v1/vouchers/${code}/redemption`, { order: order(), ...(customer ? { customer } : {}), idempotencyKey: randomUUID() });

describe('referral codes', () => {
  it('gives a referrer one code per program: 201 the first time, 200 with the same code after; a voucher of the program', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const mug = await thankYouReward(api);
    const programId = await referralProgram(api, { maxConversionsPerReferrer: 3, referrerRewards: [{ rewardId: mug }] });
    expect((await api.get(`/api/v1/campaigns/${programId}`)).body.referral).toEqual({
      confirmOn: 'REDEMPTION',
      refereeMustBeNew: true,
      maxConversionsPerReferrer: 3,
      referrerRewards: [{ rewardId: mug }],
    });
    const first = await api.post(`/api/v1/referrals/programs/${programId}/codes`, { customer: { sourceId: 'alice' } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ code: expect.stringMatching(/^REF-/), programId, conversions: { pending: 0, confirmed: 0, reverted: 0 } });
    const again = await api.post(`/api/v1/referrals/programs/${programId}/codes`, { customer: { sourceId: 'alice' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // Racing first asks of one referrer still make one code.
    const racing = await Promise.all(Array.from({ length: 8 }, () => api.post(`/api/v1/referrals/programs/${programId}/codes`, { customer: { sourceId: 'bob' } })));
    expect(racing.filter((r) => r.status === 201)).toHaveLength(1);
    expect(new Set(racing.map((r) => r.body.code)).size).toBe(1);

    const voucher = await api.get(`/api/v1/vouchers/${first.body.code}`);
    expect(voucher.body).toMatchObject({ type: 'DISCOUNT', campaignId: programId, redemption: { limit: 3, redeemedCount: 0 } });
    expect((await api.get(`/api/v1/referrals/codes/${first.body.code}`)).body).toEqual(first.body);
    expect((await api.get(`/api/v1/customers/${first.body.referrerCustomerId}/referrals`)).body).toEqual({ data: [first.body] });
    const named = await api.post(`/api/v1/referrals/programs/${programId}/codes`, { customer: { sourceId: 'carol' }, code: first.body.code });
    expect(named.status).toBe(409);
    const events = await service.pool.query(`SELECT count(*)::int AS n FROM events WHERE workspace_id = $1 AND type = 'referral.code.created'`, [workspaceId]);
    expect(events.rows[0].n).toBe(2);
    expect((await api.post(`/api/v1/referrals/programs/${randomUUID()}/codes`, { customer: { sourceId: 'x' } })).status).toBe(404);
  });
});

describe('referral program settings', () => {
  const program = (referral?: Record<string, unknown>) => ({
    name: 'Refer a friend',
    type: 'REFERRAL_PROGRAM',
    currency: 'EUR',
    voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 } },
    ...(referral ? { referral } : {}),
  });

  it('refuses a program without referrer rewards with 400 invalid_request naming the field, and creates nothing', async () => {
    const { api } = await service.newWorkspace();
    for (const body of [program(), program({ confirmOn: 'ORDER_PAID' }), program({ referrerRewards: [] })]) {
      const res = await api.post('/api/v1/campaigns', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', errors: [expect.objectContaining({ path: 'body.referral.referrerRewards' })] });
    }
    expect((await api.get('/api/v1/campaigns')).body.data).toEqual([]);
  });

  it('replaces the settings on update only with referrer rewards again; an update without referral keeps them', async () => {
    const { api } = await service.newWorkspace();
    const mug = await thankYouReward(api);
    const created = await api.create('/api/v1/campaigns', program({ referrerRewards: [{ rewardId: mug }] }));
    const dropped = await api.patch(`/api/v1/campaigns/${created.id}`, { referral: { confirmOn: 'REDEMPTION' } });
    expect(dropped.status).toBe(400);
    expect(dropped.body).toMatchObject({ code: 'invalid_request', errors: [expect.objectContaining({ path: 'body.referral.referrerRewards' })] });
    expect((await api.patch(`/api/v1/campaigns/${created.id}`, { referral: { referrerRewards: [] } })).status).toBe(400);
    expect((await api.get(`/api/v1/campaigns/${created.id}`)).body.referral).toMatchObject({ confirmOn: 'ORDER_PAID', referrerRewards: [{ rewardId: mug }] });

    const renamed = await api.patch(`/api/v1/campaigns/${created.id}`, { name: 'Bring a friend' });
    expect(renamed.body.referral).toMatchObject({ referrerRewards: [{ rewardId: mug }] });
    const cup = await thankYouReward(api);
    const replaced = await api.patch(`/api/v1/campaigns/${created.id}`, { referral: { confirmOn: 'REDEMPTION', referrerRewards: [{ rewardId: cup }] } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.referral).toEqual({ confirmOn: 'REDEMPTION', refereeMustBeNew: true, referrerRewards: [{ rewardId: cup }] });
  });

  it("makes referral codes in the workspace's default currency when the program's money template names none", async () => {
    const { api } = await service.newWorkspace();
    await api.patch('/api/v1/workspace', { defaultCurrency: 'EUR' });
    const { currency: _, ...unpriced } = program({ referrerRewards: [{ rewardId: await thankYouReward(api) }] });
    const created = await api.create('/api/v1/campaigns', unpriced);
    const code = await codeFor(api, created.id, { sourceId: 'alice' });
    expect((await api.get(`/api/v1/vouchers/${code}`)).body).toMatchObject({ currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 500 } });
  });
});

describe('conversions at checkout', () => {
  it('refuses what the contract refuses, in its order, and converts a new referee once', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await referralProgram(api);
    const alice = await api.create('/api/v1/customers', { sourceId: 'alice', email: 'Alice@Example.com' });
    const code = await codeFor(api, programId, { id: alice.id });

    expect((await redeem(api, code)).body).toMatchObject({ ok: false, code: 'customer_required' });
    expect((await redeem(api, code, { id: alice.id })).body).toMatchObject({ ok: false, code: 'referral_self_use' });
    // A second account of the referrer: the same email in another case.
    expect((await redeem(api, code, { sourceId: 'alice-2', email: 'alice@example.COM' })).body).toMatchObject({ ok: false, code: 'referral_self_use' });
    // A customer with a paid order is not new.
    const paid = await api.create('/api/v1/orders', { amount: 1_000, currency: 'EUR', customer: { sourceId: 'old-timer' } });
    expect((await api.patch(`/api/v1/orders/${paid.id}`, { status: 'PAID' })).status).toBe(200);
    expect((await redeem(api, code, { sourceId: 'old-timer' })).body).toMatchObject({ ok: false, code: 'referee_not_new' });

    const converted = await redeem(api, code, { sourceId: 'dave' });
    expect(converted.body).toMatchObject({ ok: true, redemption: { amount: 500 } });
    expect((await redeem(api, code, { sourceId: 'dave' })).body).toMatchObject({ ok: false, code: 'referee_already_referred' });
    // Another referrer's code of the same program: still one conversion per referee and program.
    const otherCode = await codeFor(api, programId, { sourceId: 'erin' });
    expect((await redeem(api, otherCode, { sourceId: 'dave' })).body).toMatchObject({ ok: false, code: 'referee_already_referred' });

    const list = await api.get(`/api/v1/referrals/programs/${programId}/conversions`);
    expect(list.body.data).toHaveLength(1);
    const conversion = list.body.data[0];
    expect(conversion).toMatchObject({
      programId,
      code,
      referrerCustomerId: alice.id,
      refereeCustomerId: converted.body.redemption.customerId,
      redemptionId: converted.body.redemption.id,
      status: 'CONFIRMED',
      outcomes: [],
    });
    expect((await api.get(`/api/v1/referrals/conversions/${conversion.id}`)).body).toEqual(conversion);
    expect((await api.get(`/api/v1/referrals/codes/${code}`)).body.conversions).toEqual({ pending: 0, confirmed: 1, reverted: 0 });
    const types = await service.pool.query(`SELECT type FROM events WHERE workspace_id = $1 AND type LIKE 'referral.conversion.%' ORDER BY created_at, type`, [workspaceId]);
    expect(types.rows.map((r) => r.type).sort()).toEqual(['referral.conversion.confirmed', 'referral.conversion.created']);
  });

  it('a rollback reverts the conversion, and the referee may convert again', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await referralProgram(api);
    const code = await codeFor(api, programId, { sourceId: 'alice' });
    const converted = await redeem(api, code, { sourceId: 'dave' });
    expect(converted.body.ok).toBe(true);
    expect((await api.post(`/api/v1/redemptions/${converted.body.redemption.id}/rollback`, {})).body).toMatchObject({ ok: true });
    const [conversion] = (await api.get(`/api/v1/referrals/programs/${programId}/conversions`)).body.data;
    expect(conversion.status).toBe('REVERTED');
    const reverted = await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = 'referral.conversion.reverted'`, [workspaceId]);
    expect(reverted.rows.map((r) => r.payload)).toEqual([expect.objectContaining({ conversionId: conversion.id, reason: 'ROLLBACK' })]);
    expect((await redeem(api, code, { sourceId: 'dave' })).body).toMatchObject({ ok: true });
    expect((await api.get(`/api/v1/referrals/codes/${code}`)).body.conversions).toEqual({ pending: 0, confirmed: 1, reverted: 1 });
  });

  it('holds the referrer cap under 12 racing referees, and one conversion per referee racing over two codes', async () => {
    const { api } = await service.newWorkspace();
    const programId = await referralProgram(api, { maxConversionsPerReferrer: 5 });
    const code = await codeFor(api, programId, { sourceId: 'alice' });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => redeem(api, code, { sourceId: `referee-${i}` })));
    for (const r of results) expect(r.status).toBe(200);
    expect(results.filter((r) => r.body.ok)).toHaveLength(5);
    expect(results.filter((r) => !r.body.ok).map((r) => r.body.code)).toEqual(Array(7).fill('referrer_limit_reached'));
    expect((await api.get(`/api/v1/referrals/codes/${code}`)).body.conversions.confirmed).toBe(5);

    // Ten referees, each racing through two referrers' codes of one program: each converts exactly once.
    const uncapped = await referralProgram(api);
    const codes = [await codeFor(api, uncapped, { sourceId: 'bob' }), await codeFor(api, uncapped, { sourceId: 'carol' })];
    const pairs = await Promise.all(
      Array.from({ length: 10 }, (_, i) => Promise.all(codes.map((c) => redeem(api, c, { sourceId: `twice-${i}` })))),
    );
    for (const pair of pairs) {
      expect(pair.filter((r) => r.body.ok)).toHaveLength(1);
      expect(pair.find((r) => !r.body.ok)!.body.code).toBe('referee_already_referred');
    }
    const { rows } = await service.pool.query(
      `SELECT referee_customer_id, count(*)::int AS n FROM referral_conversions WHERE program_id = $1 AND status <> 'REVERTED' GROUP BY 1 HAVING count(*) > 1`,
      [uncapped],
    );
    expect(rows).toEqual([]);
    expect((await api.get(`/api/v1/referrals/programs/${uncapped}/conversions?limit=100`)).body.data).toHaveLength(10);
  });

  it('converts inside a stack, and a failed stack converts nothing', async () => {
    const { api } = await service.newWorkspace();
    const programId = await referralProgram(api);
    const code = await codeFor(api, programId, { sourceId: 'alice' });
    const extra = await api.create('/api/v1/vouchers', { code: `EXTRA-${randomUUID().slice(0, 6)}`, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 100 } });
    const failed = await api.post('/api/v1/redemptions/stack', {
      vouchers: [{ code }, { code: extra.code }, { code: 'NO-SUCH' }],
      order: order(),
      customer: { sourceId: 'dave' },
      idempotencyKey: randomUUID(),
    });
    expect(failed.body).toMatchObject({ ok: false, code: 'voucher_not_found' });
    expect((await api.get(`/api/v1/referrals/programs/${programId}/conversions`)).body.data).toEqual([]);
    const selfStack = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code }, { code: extra.code }], order: order(), customer: { sourceId: 'alice' }, idempotencyKey: randomUUID() });
    expect(selfStack.body).toMatchObject({ ok: false, code: 'referral_self_use' });

    const stack = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code }, { code: extra.code }], order: order(), customer: { sourceId: 'dave' }, idempotencyKey: randomUUID() });
    expect(stack.body).toMatchObject({ ok: true, order: { discountAmount: 600 } });
    const [conversion] = (await api.get(`/api/v1/referrals/programs/${programId}/conversions`)).body.data;
    expect(conversion).toMatchObject({ status: 'CONFIRMED', redemptionId: stack.body.results.find((r: { voucherCode: string }) => r.voucherCode === code).redemptionId });
    const again = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code }], order: order(), customer: { sourceId: 'dave' }, idempotencyKey: randomUUID() });
    expect(again.body).toMatchObject({ ok: false, code: 'referee_already_referred' });
  });

  it('keeps a conversion PENDING until its order is paid (once, however often order.paid is seen), and a cancel reverts it', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await referralProgram(api, { confirmOn: 'ORDER_PAID' });
    const code = await codeFor(api, programId, { sourceId: 'alice' });
    const statusOf = async () => (await api.get(`/api/v1/referrals/programs/${programId}/conversions`)).body.data.map((c: { status: string }) => c.status);
    const eventsOf = async (type: string) =>
      (await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = $2`, [workspaceId, type])).rows.map((r) => r.payload);

    // The referee's order, named by its sourceId in the redemption.
    const placed = await api.create('/api/v1/orders', { sourceId: 'web-1001', amount: 5_000, currency: 'EUR', customer: { sourceId: 'dave' } });
    const redeemed = await api.post(`/api/v1/vouchers/${code}/redemption`, { order: { id: 'web-1001', amount: 5_000, currency: 'EUR' }, customer: { sourceId: 'dave' } });
    expect(redeemed.body.ok).toBe(true);
    expect(await statusOf()).toEqual(['PENDING']);
    await drainReferrals();
    expect(await statusOf()).toEqual(['PENDING']);

    expect((await api.patch(`/api/v1/orders/${placed.id}`, { status: 'PAID' })).status).toBe(200);
    await drainReferrals();
    expect(await statusOf()).toEqual(['CONFIRMED']);
    expect(await eventsOf('referral.conversion.confirmed')).toEqual([expect.objectContaining({ code, orderId: 'web-1001', programId })]);
    // order.paid seen twice (a replayed event): confirmed once.
    await service.pool.query(`INSERT INTO events (workspace_id, type, payload) SELECT workspace_id, type, payload FROM events WHERE workspace_id = $1 AND type = 'order.paid'`, [workspaceId]);
    await drainReferrals();
    expect(await eventsOf('referral.conversion.confirmed')).toHaveLength(1);

    expect((await api.patch(`/api/v1/orders/${placed.id}`, { status: 'CANCELED' })).status).toBe(200);
    await drainReferrals();
    expect(await statusOf()).toEqual(['REVERTED']);
    expect(await eventsOf('referral.conversion.reverted')).toEqual([expect.objectContaining({ code, reason: 'ORDER_CANCELED' })]);
  });

  it('confirms a pending conversion when its order is created already paid, as when it is moved to PAID', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await referralProgram(api, { confirmOn: 'ORDER_PAID' });
    const code = await codeFor(api, programId, { sourceId: 'alice' });
    // The checkout redeems first; the shop records the order afterwards, paid (or fulfilled) at once.
    for (const [sourceId, status, referee] of [['web-2001', 'PAID', 'dave'], ['web-2002', 'FULFILLED', 'erin']] as const) {
      const redeemed = await api.post(`/api/v1/vouchers/${code}/redemption`, { order: { id: sourceId, amount: 5_000, currency: 'EUR' }, customer: { sourceId: referee } });
      expect(redeemed.body.ok).toBe(true);
      await api.create('/api/v1/orders', { sourceId, amount: 5_000, currency: 'EUR', customer: { sourceId: referee }, status });
    }
    await drainReferrals();
    const conversions = (await api.get(`/api/v1/referrals/programs/${programId}/conversions`)).body.data;
    expect(conversions.map((c: { status: string }) => c.status)).toEqual(['CONFIRMED', 'CONFIRMED']);
    const confirmed = await service.pool.query(`SELECT payload->>'orderId' AS "orderId" FROM events WHERE workspace_id = $1 AND type = 'referral.conversion.confirmed'`, [workspaceId]);
    expect(confirmed.rows.map((r) => r.orderId).sort()).toEqual(['web-2001', 'web-2002']);
  });

  it('converts by a custom event naming the code, with the same refusals, sharing the cap with checkout under races', async () => {
    const { api } = await service.newWorkspace();
    const programId = await referralProgram(api, { maxConversionsPerReferrer: 4 });
    const code = await codeFor(api, programId, { sourceId: 'alice', email: 'alice@example.com' });
    const event = (sourceId: string, extra: Record<string, unknown> = {}) =>
      api.post('/api/v1/custom-events', { name: 'signed_up', customer: { sourceId, ...extra }, referral: { code } });

    const first = await event('dave');
    expect(first.status).toBe(200);
    expect(first.body.effects).toEqual([{ type: 'REFERRAL_CONVERTED', conversionId: expect.any(String), programId, code, status: 'CONFIRMED' }]);
    expect((await event('dave')).body.effects).toEqual([{ type: 'REFERRAL_REFUSED', code, reason: 'referee_already_referred' }]);
    expect((await event('alice-2', { email: 'ALICE@example.com' })).body.effects).toEqual([{ type: 'REFERRAL_REFUSED', code, reason: 'referral_self_use' }]);
    expect((await api.post('/api/v1/custom-events', { name: 'x', customer: { sourceId: 'erin' }, referral: { code: 'NOPE' } })).body.effects).toEqual([
      { type: 'REFERRAL_REFUSED', code: 'NOPE', reason: 'voucher_not_found' },
    ]);

    // 3 uses of the cap are left: 6 events and 6 checkouts race for them.
    const racing = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => event(`by-event-${i}`)),
      ...Array.from({ length: 6 }, (_, i) => redeem(api, code, { sourceId: `by-checkout-${i}` })),
    ]);
    for (const r of racing) expect(r.status).toBe(200);
    const converted = racing.filter((r) => r.body.ok === true || r.body.effects?.[0]?.type === 'REFERRAL_CONVERTED');
    expect(converted).toHaveLength(3);
    const voucher = await api.get(`/api/v1/vouchers/${code}`);
    expect(voucher.body.redemption).toMatchObject({ limit: 4, redeemedCount: 4 });
    expect((await api.get(`/api/v1/referrals/codes/${code}`)).body.conversions.confirmed).toBe(4);
  });

  it('grants each side its rewards from the catalog once on confirmation, and takes them back when the conversion is reverted', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const coupons = await api.create('/api/v1/campaigns', { name: 'Thank-you coupons', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1_000 } } });
    const club = await api.create('/api/v1/campaigns', { name: 'Club', type: 'LOYALTY_PROGRAM', loyalty: {} });
    const thankYou = await api.create('/api/v1/rewards', { name: '10 EUR for you', type: 'DISCOUNT_VOUCHER', campaignId: coupons.id });
    const welcome = await api.create('/api/v1/rewards', { name: '200 welcome points', type: 'LOYALTY_POINTS', campaignId: club.id, amount: 200 });
    const programId = await referralProgram(api, { referrerRewards: [{ rewardId: thankYou.id }], refereeRewardId: welcome.id });
    const code = await codeFor(api, programId, { sourceId: 'alice' });
    const converted = await redeem(api, code, { sourceId: 'dave' });
    expect(converted.body.ok).toBe(true);
    await drainReferrals();
    const [conversion] = (await api.get(`/api/v1/referrals/programs/${programId}/conversions`)).body.data;
    expect(conversion.outcomes).toEqual([
      { side: 'REFERRER', rewardId: thankYou.id, status: 'GRANTED', issued: { voucherCode: expect.stringMatching(/^RW-/) } },
      { side: 'REFEREE', rewardId: welcome.id, status: 'GRANTED', issued: { points: 200 } },
    ]);
    const referrerVoucher = conversion.outcomes[0].issued.voucherCode;
    expect((await api.get(`/api/v1/vouchers/${referrerVoucher}`)).body).toMatchObject({ customerId: conversion.referrerCustomerId, active: true });
    const refereeCard = (await api.get(`/api/v1/customers/${conversion.refereeCustomerId}/loyalty`)).body.data[0];
    expect(refereeCard).toMatchObject({ programId: club.id, balance: 200 });
    const granted = await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = 'referral.reward.granted'`, [workspaceId]);
    expect(granted.rows).toHaveLength(2);
    // The confirmation seen twice grants nothing more.
    await service.pool.query(`INSERT INTO events (workspace_id, type, payload) SELECT workspace_id, type, payload FROM events WHERE workspace_id = $1 AND type = 'referral.conversion.confirmed'`, [workspaceId]);
    await drainReferrals();
    expect((await service.pool.query(`SELECT count(*)::int AS n FROM events WHERE workspace_id = $1 AND type = 'referral.reward.granted'`, [workspaceId])).rows[0].n).toBe(2);

    // The referee spends 50 of the welcome points; the rollback reverts the conversion and takes back what is left.
    expect((await api.post(`/api/v1/loyalty/members/${refereeCard.id}/points`, { points: -50 })).body.ok).toBe(true);
    expect((await api.post(`/api/v1/redemptions/${converted.body.redemption.id}/rollback`, {})).body.ok).toBe(true);
    await drainReferrals();
    const after = (await api.get(`/api/v1/referrals/conversions/${conversion.id}`)).body;
    expect(after).toMatchObject({ status: 'REVERTED', outcomes: [{ side: 'REFERRER', status: 'REVERTED' }, { side: 'REFEREE', status: 'REVERTED' }] });
    expect((await api.get(`/api/v1/vouchers/${referrerVoucher}`)).body.active).toBe(false);
    expect((await api.get(`/api/v1/loyalty/members/${refereeCard.id}`)).body.balance).toBe(0);
  });

  it('answers referral insights: conversions by status, rewards by status, top referrers; bounded ranges', async () => {
    const { api } = await service.newWorkspace();
    const gift = await api.create('/api/v1/campaigns', { name: 'Gift', type: 'GIFT_VOUCHERS', currency: 'EUR' });
    const credit = await api.create('/api/v1/rewards', { name: '5 EUR', type: 'GIFT_CREDITS', campaignId: gift.id, amount: 500 });
    const programId = await referralProgram(api, { referrerRewards: [{ rewardId: credit.id }] });
    const alice = await codeFor(api, programId, { sourceId: 'alice' });
    const bob = await codeFor(api, programId, { sourceId: 'bob' });
    for (const referee of ['r1', 'r2', 'r3']) expect((await redeem(api, alice, { sourceId: referee })).body.ok).toBe(true);
    const rolledBack = await redeem(api, bob, { sourceId: 'r4' });
    await drainReferrals();
    await api.post(`/api/v1/redemptions/${rolledBack.body.redemption.id}/rollback`, {});
    await drainReferrals();
    const figures = await api.get('/api/v1/insights/referrals');
    expect(figures.status).toBe(200);
    expect(figures.body).toEqual({
      conversions: { pending: 0, confirmed: 3, reverted: 1 },
      rewards: { granted: 3, failed: 0, reverted: 1 },
      topReferrers: [{ customerId: expect.any(String), programId, code: alice, confirmed: 3, pending: 0 }],
    });
    expect((await api.get(`/api/v1/insights/referrals?programId=${randomUUID()}`)).body.conversions).toEqual({ pending: 0, confirmed: 0, reverted: 0 });
    expect((await api.get('/api/v1/insights/referrals?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400);
  });
});

