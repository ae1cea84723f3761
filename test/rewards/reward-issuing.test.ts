// Rewards at their edges, over real HTTP, the real engine and a real PostgreSQL: prices per tier, pools of codes under
// races, what is issued being usable at checkout at once (even on a card the engine holds in its cache), refunds of
// every kind, fulfillment events, per-member limits under races and idempotent redemptions.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { addPoints, createProgram, expectLedgerMatchesCaches, joinMember, member } from '../loyalty/support.js';
import { discountCampaign, eventPayloads, offered, redeem, refund } from './support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterEach(async () => expectLedgerMatchesCaches(service.pool));
afterAll(async () => service?.close());

const order = (amount: number) => ({ amount, currency: 'EUR' });

describe('prices per tier', () => {
  it("a member pays its tier's price, in the list and at redemption; out of the tier, the offer's points", async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const silver = await api.create(`/api/v1/loyalty/programs/${programId}/tiers`, { name: 'Silver', minPoints: 0 });
    const otherProgram = await createProgram(api, {}, 'Other');
    const foreignTier = await api.create(`/api/v1/loyalty/programs/${otherProgram}/tiers`, { name: 'Elsewhere', minPoints: 0 });
    const card = await joinMember(api, programId);
    expect((await member(api, card.id)).tier).toEqual({ id: silver.id, name: 'Silver' });
    await addPoints(api, card.id, 500);

    const mug = await api.create('/api/v1/rewards', { name: 'Mug', type: 'MATERIAL' });
    const foreign = await api.post(`/api/v1/loyalty/programs/${programId}/rewards`, { rewardId: mug.id, points: 100, tierPrices: [{ tierId: foreignTier.id, points: 1 }] });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors).toEqual([expect.objectContaining({ path: 'body.tierPrices.0.tierId' })]);
    const offer = await api.create(`/api/v1/loyalty/programs/${programId}/rewards`, { rewardId: mug.id, points: 100, tierPrices: [{ tierId: silver.id, points: 80 }] });
    expect(offer).toMatchObject({ points: 100, tierPrices: [{ tierId: silver.id, points: 80 }] });

    const [listed] = (await api.get(`/api/v1/loyalty/members/${card.id}/rewards`)).body.data;
    expect(listed).toMatchObject({ rewardId: mug.id, points: 100, price: 80, affordable: true, pointsMissing: 0 });
    expect((await redeem(api, card.id, mug.id)).body).toMatchObject({ ok: true, rewardRedemption: { points: 80 }, member: { balance: 420 } });

    await api.patch(`/api/v1/loyalty/programs/${programId}/tiers/${silver.id}`, { minPoints: 1_000 });
    expect((await member(api, card.id)).tier).toBeUndefined();
    const [untiered] = (await api.get(`/api/v1/loyalty/members/${card.id}/rewards`)).body.data;
    expect(untiered).toMatchObject({ price: 100, affordable: true });
    expect((await redeem(api, card.id, mug.id)).body).toMatchObject({ ok: true, rewardRedemption: { points: 100 }, member: { balance: 320 } });
  });
});

describe('code pools', () => {
  it('hands out one code per redemption, the pool being the stock: five racing members for two codes get exactly two, each its own', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const type = await api.create('/api/v1/reward-types', { key: 'partner-code', name: 'Partner code', attributesSchema: { properties: {} }, fulfillment: 'NONE' });
    const rewardId = await offered(api, programId, { name: 'Cinema ticket', type: 'CUSTOM', rewardTypeId: type.id, stock: 100 }, 50);
    const added = await api.post(`/api/v1/rewards/${rewardId}/codes`, { codes: ['CINE-1', 'CINE-2', 'CINE-1'] });
    expect(added.body).toEqual({ rewardId, added: 2, skipped: 1, stock: 2 });
    expect((await api.post(`/api/v1/rewards/${rewardId}/codes`, { codes: ['CINE-2'] })).body).toMatchObject({ added: 0, skipped: 1, stock: 2 });
    expect((await api.get(`/api/v1/rewards/${rewardId}`)).body).toMatchObject({ codePool: true, stock: 2 });
    const setStock = await api.patch(`/api/v1/rewards/${rewardId}`, { stock: 10 });
    expect(setStock.status).toBe(400);
    expect(setStock.body.errors).toEqual([expect.objectContaining({ path: 'body.stock' })]);
    expect((await api.post(`/api/v1/rewards/${rewardId}/codes`, { codes: ['has space'] })).status).toBe(400);

    const members = await Promise.all(Array.from({ length: 5 }, () => joinMember(api, programId)));
    for (const m of members) await addPoints(api, m.id, 50);
    const race = await Promise.all(members.map((m) => redeem(api, m.id, rewardId)));
    const won = race.filter((r) => r.body.ok);
    expect(won.map((r) => r.body.rewardRedemption.issued.code).sort()).toEqual(['CINE-1', 'CINE-2']);
    expect(won.every((r) => r.body.rewardRedemption.status === 'COMPLETED')).toBe(true);
    expect(race.filter((r) => !r.body.ok).map((r) => r.body.code)).toEqual(['reward_out_of_stock', 'reward_out_of_stock', 'reward_out_of_stock']);
    expect((await eventPayloads(service.pool, workspaceId, 'loyalty.reward.redeemed')).map((p) => p.issued.code).sort()).toEqual(['CINE-1', 'CINE-2']);

    // A refunded code was seen by its member: it is void, the stock does not come back, the next code goes out instead.
    const first = won[0]!.body.rewardRedemption;
    expect((await refund(api, first.id)).body).toMatchObject({ ok: true, rewardRedemption: { status: 'REFUNDED' } });
    expect((await api.get(`/api/v1/rewards/${rewardId}`)).body).toMatchObject({ stock: 0, redeemed: 1 });
    await api.post(`/api/v1/rewards/${rewardId}/codes`, { codes: ['CINE-3'] });
    const loser = members.find((m) => !won.some((r) => r.body.rewardRedemption.memberId === m.id))!;
    expect((await redeem(api, loser.id, rewardId)).body).toMatchObject({ ok: true, rewardRedemption: { issued: { code: 'CINE-3' } } });
    const { rows } = await service.pool.query(`SELECT code, status FROM reward_codes WHERE reward_id = $1 ORDER BY code`, [rewardId]);
    expect(rows.map((r) => [r.code, r.status])).toEqual([
      ['CINE-1', first.issued.code === 'CINE-1' ? 'VOID' : 'ISSUED'],
      ['CINE-2', first.issued.code === 'CINE-2' ? 'VOID' : 'ISSUED'],
      ['CINE-3', 'ISSUED'],
    ]);
  });

  it('refuses a pool for rewards that issue their own vouchers or points (409)', async () => {
    const { api } = await service.newWorkspace();
    const coupon = await api.create('/api/v1/rewards', { name: 'Coupon', type: 'DISCOUNT_VOUCHER', campaignId: await discountCampaign(api) });
    expect((await api.post(`/api/v1/rewards/${coupon.id}/codes`, { codes: ['X-1'] })).status).toBe(409);
    expect((await api.get(`/api/v1/rewards/${coupon.id}`)).body).toMatchObject({ codePool: false, stock: null });
  });
});

describe('issuing through the engine', () => {
  it('credits land on a gift card the engine holds in its cache, spendable at once; a refund takes them back', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 1_000);
    const giftCampaign = await api.create('/api/v1/campaigns', { name: 'Gift cards', type: 'GIFT_VOUCHERS', currency: 'EUR' });
    const credits = await offered(api, programId, { name: '5 EUR credit', type: 'GIFT_CREDITS', campaignId: giftCampaign.id, amount: 500 }, 100);
    const first = await redeem(api, card.id, credits);
    const giftCode: string = first.body.rewardRedemption.issued.voucherCode;
    const customer = { id: card.customerId };

    // The engine reads the card (500) into its cache; the second credit reaches it before the next decision.
    expect((await api.post(`/api/v1/vouchers/${giftCode}/validate`, { amount: 800, customer })).body).toMatchObject({ valid: false, code: 'gift_balance_insufficient' });
    const second = await redeem(api, card.id, credits);
    expect(second.body.rewardRedemption.issued).toEqual({ voucherCode: giftCode, amount: 500 });
    expect((await api.post(`/api/v1/vouchers/${giftCode}/validate`, { amount: 800, customer })).body).toMatchObject({ valid: true, voucher: { balance: 1_000 } });

    // Refunded, the second credit leaves the card at once: the engine refuses to spend it.
    expect((await refund(api, second.body.rewardRedemption.id)).body).toMatchObject({ ok: true, member: { balance: 900 } });
    expect((await api.post(`/api/v1/vouchers/${giftCode}/redemption`, { amount: 800, customer })).body).toMatchObject({ ok: false, code: 'gift_balance_insufficient' });
    expect((await api.post(`/api/v1/vouchers/${giftCode}/redemption`, { order: order(2_000), customer })).body).toMatchObject({ ok: true, redemption: { amount: 500 } });
    const ledger = (await api.get(`/api/v1/vouchers/${giftCode}/transactions`)).body.data;
    expect(ledger.map((e: { type: string; amount: number }) => [e.type, e.amount])).toEqual([['REDEMPTION', -500], ['ADJUSTMENT', -500], ['CREDITS_ADDED', 500], ['CREDITS_ADDED', 500]]);
    expect(ledger[0].balanceAfter).toBe(0);
  });

  it("draws the issued voucher's code from the campaign's codeConfig and records voucher.created", async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 100);
    const campaign = await api.create('/api/v1/campaigns', {
      name: 'Thanks', type: 'DISCOUNT_COUPONS', currency: 'EUR',
      voucher: { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 }, codeConfig: { pattern: 'THX-####' } },
    });
    const rewardId = await offered(api, programId, { name: '10 %', type: 'DISCOUNT_VOUCHER', campaignId: campaign.id }, 100);
    const redeemed = await redeem(api, card.id, rewardId);
    const code = redeemed.body.rewardRedemption.issued.voucherCode;
    expect(code).toMatch(/^THX-[A-Z0-9]{4}$/);
    expect(await eventPayloads(service.pool, workspaceId, 'voucher.created')).toEqual([expect.objectContaining({ code, voucher: expect.objectContaining({ customerId: card.customerId }) })]);
    expect((await api.post(`/api/v1/vouchers/${code}/redemption`, { order: order(3_000), customer: { id: card.customerId } })).body).toMatchObject({ ok: true, redemption: { amount: 300 } });
  });
});

describe('refunds and fulfillment', () => {
  it('a LOYALTY_POINTS refund takes the points back from the other card, and is refused once they are spent', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const partner = await createProgram(api, {}, 'Partner miles');
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 100);
    const miles = await offered(api, programId, { name: '50 miles', type: 'LOYALTY_POINTS', campaignId: partner, amount: 50 }, 30);
    const first = await redeem(api, card.id, miles);
    const second = await redeem(api, card.id, miles);
    const partnerCard = (await api.get(`/api/v1/customers/${card.customerId}/loyalty`)).body.data.find((c: { programId: string }) => c.programId === partner);
    expect(partnerCard).toMatchObject({ balance: 100 });

    expect((await refund(api, first.body.rewardRedemption.id)).body).toMatchObject({ ok: true, member: { balance: 70 } });
    expect(await member(api, partnerCard.id)).toMatchObject({ balance: 50 });
    await addPoints(api, partnerCard.id, -30);
    expect((await refund(api, second.body.rewardRedemption.id)).body).toMatchObject({ ok: false, code: 'reward_already_used' });
    expect(await member(api, card.id)).toMatchObject({ balance: 70 });
    expect(await member(api, partnerCard.id)).toMatchObject({ balance: 20 });
  });

  it('WEBHOOK fulfillment waits; the events tell a receiver the type key, attributes, fulfillment and refund', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 300);
    const shipped = await api.create('/api/v1/reward-types', {
      key: 'merch', name: 'Merch', attributesSchema: { properties: { size: { type: 'enum', values: ['S', 'M', 'L'], required: true } } }, fulfillment: 'WEBHOOK',
    });
    const instant = await api.create('/api/v1/reward-types', { key: 'badge', name: 'Badge', attributesSchema: { properties: { level: { type: 'integer' } } }, fulfillment: 'NONE' });
    const shirt = await offered(api, programId, { name: 'Shirt', type: 'CUSTOM', rewardTypeId: shipped.id, attributes: { size: 'M' } }, 100);
    const badge = await offered(api, programId, { name: 'Badge', type: 'CUSTOM', rewardTypeId: instant.id, attributes: { level: 3 } }, 10);

    const waiting = await redeem(api, card.id, shirt);
    expect(waiting.body).toMatchObject({ ok: true, rewardRedemption: { status: 'PENDING_FULFILLMENT' } });
    const done = await redeem(api, card.id, badge);
    expect(done.body).toMatchObject({ ok: true, rewardRedemption: { status: 'COMPLETED' } });
    expect((await api.post(`/api/v1/loyalty/reward-redemptions/${done.body.rewardRedemption.id}/fulfillment`, { status: 'FULFILLED' })).status).toBe(409);
    expect(await eventPayloads(service.pool, workspaceId, 'loyalty.reward.redeemed')).toEqual([
      expect.objectContaining({ memberId: card.id, points: 100, rewardTypeKey: 'merch', fulfillment: 'WEBHOOK', attributes: { size: 'M' }, status: 'PENDING_FULFILLMENT' }),
      expect.objectContaining({ memberId: card.id, points: 10, rewardTypeKey: 'badge', fulfillment: 'NONE', attributes: { level: 3 }, status: 'COMPLETED' }),
    ]);

    const canceled = await api.post(`/api/v1/loyalty/reward-redemptions/${waiting.body.rewardRedemption.id}/fulfillment`, { status: 'CANCELED' });
    expect(canceled.body).toMatchObject({ ok: true, rewardRedemption: { status: 'CANCELED' }, member: { balance: 290 } });
    expect(await eventPayloads(service.pool, workspaceId, 'loyalty.reward.refunded')).toEqual([
      expect.objectContaining({ memberId: card.id, points: 100, rewardRedemptionId: waiting.body.rewardRedemption.id, status: 'CANCELED' }),
    ]);
    expect((await api.get('/api/v1/reward-types')).body.data.map((t: { key: string }) => t.key).sort()).toEqual(['badge', 'merch']);
  });
});

describe('idempotency and limits', () => {
  it('holds the per-member limit under races (limit 1, four racing redemptions of one member → 1)', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 1_000);
    const once = await offered(api, programId, { name: 'Welcome gift', type: 'MATERIAL', limitPerMember: 1 }, 10);
    const race = await Promise.all(Array.from({ length: 4 }, () => redeem(api, card.id, once)));
    expect(race.filter((r) => r.body.ok)).toHaveLength(1);
    expect(race.filter((r) => !r.body.ok).map((r) => r.body.code)).toEqual(['reward_limit_reached', 'reward_limit_reached', 'reward_limit_reached']);
    expect(await member(api, card.id)).toMatchObject({ balance: 990 });
    // A refunded redemption no longer counts against the limit.
    await refund(api, race.find((r) => r.body.ok)!.body.rewardRedemption.id);
    expect((await redeem(api, card.id, once)).body.ok).toBe(true);
  });

  it('replays a refusal with idempotent: true, runs racing requests of one key once, and answers 409 to the key with another body', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    const mug = await offered(api, programId, { name: 'Mug', type: 'MATERIAL' }, 100);
    const pen = await offered(api, programId, { name: 'Pen', type: 'MATERIAL' }, 10);
    expect((await redeem(api, card.id, mug, { idempotencyKey: 'k-1' })).body).toMatchObject({ ok: false, code: 'loyalty_points_insufficient' });
    await addPoints(api, card.id, 500);
    expect((await redeem(api, card.id, mug, { idempotencyKey: 'k-1' })).body).toMatchObject({ ok: false, code: 'loyalty_points_insufficient', idempotent: true });
    expect((await redeem(api, card.id, pen, { idempotencyKey: 'k-1' })).body).toMatchObject({ status: 409, code: 'idempotency_conflict' });

    const racing = await Promise.all(Array.from({ length: 4 }, () => redeem(api, card.id, mug, { idempotencyKey: 'k-2' })));
    const ids = new Set(racing.filter((r) => r.status === 200).map((r) => r.body.rewardRedemption.id));
    expect(ids.size).toBe(1);
    expect(racing.every((r) => r.status === 200 || r.body.code === 'idempotency_conflict')).toBe(true);
    expect(await member(api, card.id)).toMatchObject({ balance: 400 });
  });
});
