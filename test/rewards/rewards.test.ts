// The rewards catalog over real HTTP, the real engine and a real PostgreSQL: each reward kind issuing what it says,
// stock and points under races, refunds into the same buckets, custom reward types with their attributes and
// fulfillment. After every test the loyalty caches equal the ledger and the buckets.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { holdRowLock } from '../support/row-lock.js';
import { addPoints, createProgram, expectLedgerMatchesCaches, joinMember, member, transactions } from '../loyalty/support.js';
import { discountCampaign, offered, redeem } from './support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterEach(async () => expectLedgerMatchesCaches(service.pool));
afterAll(async () => service?.close());

describe('rewards catalog', () => {
  it('checks what each kind needs, and a CUSTOM reward\'s attributes against its type (400 naming the path)', async () => {
    const { api } = await service.newWorkspace();
    const noCampaign = await api.post('/api/v1/rewards', { name: 'Coupon', type: 'DISCOUNT_VOUCHER' });
    expect(noCampaign.status).toBe(400);
    expect(noCampaign.body.errors).toEqual([expect.objectContaining({ path: 'body.campaignId' })]);
    expect((await api.post('/api/v1/rewards', { name: 'Credits', type: 'GIFT_CREDITS', campaignId: await discountCampaign(api), amount: 500 })).status).toBe(400);

    const type = await api.create('/api/v1/reward-types', {
      key: 'workshop',
      name: 'Workshop seat',
      attributesSchema: { properties: { city: { type: 'enum', values: ['Paris', 'Berlin'], required: true }, seats: { type: 'integer' }, vip: { type: 'boolean' } } },
      fulfillment: 'MANUAL',
    });
    expect((await api.post('/api/v1/reward-types', { key: 'workshop', name: 'again', attributesSchema: { properties: {} }, fulfillment: 'NONE' })).status).toBe(409);
    // The type's `key` is its name, not a secret: its audit entry shows it (an API key's `key` stays redacted).
    const { rows: entries } = await service.pool.query(`SELECT changes FROM audit_entries WHERE resource_id = $1 AND operation = 'rewardTypes.create'`, [type.id]);
    expect(entries.map((e) => e.changes.after?.key)).toEqual(['workshop']);
    const bad = await api.post('/api/v1/rewards', { name: 'Seat', type: 'CUSTOM', rewardTypeId: type.id, attributes: { city: 'Rome', seats: 1.5, colour: 'red' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['body.attributes.city', 'body.attributes.colour', 'body.attributes.seats']);
    const missing = await api.post('/api/v1/rewards', { name: 'Seat', type: 'CUSTOM', rewardTypeId: type.id, attributes: {} });
    expect(missing.body.errors).toEqual([{ path: 'body.attributes.city', message: 'required by the reward type' }]);
    const seat = await api.create('/api/v1/rewards', { name: 'Seat', type: 'CUSTOM', rewardTypeId: type.id, attributes: { city: 'Paris', seats: 2 }, stock: 10 });
    expect(seat).toMatchObject({ type: 'CUSTOM', rewardTypeId: type.id, attributes: { city: 'Paris', seats: 2 }, stock: 10, redeemed: 0, active: true });
    expect((await api.patch(`/api/v1/rewards/${seat.id}`, { attributes: { city: 'Oslo' } })).status).toBe(400);
    expect((await api.delete(`/api/v1/reward-types/${type.id}`)).status).toBe(409);
  });

  it('lists a member\'s rewards with affordable and pointsMissing', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 150);
    const cheap = await offered(api, programId, { name: 'Mug', type: 'MATERIAL' }, 100);
    const dear = await offered(api, programId, { name: 'Bike', type: 'MATERIAL' }, 1_000);
    const list = await api.get(`/api/v1/loyalty/members/${card.id}/rewards`);
    const byReward = Object.fromEntries(list.body.data.map((r: { rewardId: string }) => [r.rewardId, r]));
    expect(byReward[cheap]).toMatchObject({ points: 100, affordable: true, pointsMissing: 0, reward: { name: 'Mug' } });
    expect(byReward[dear]).toMatchObject({ points: 1_000, affordable: false, pointsMissing: 850 });
  });
});

describe('reward redemptions', () => {
  it('DISCOUNT_VOUCHER: debits the points, issues a voucher assigned to the customer that checkout redeems; a refund after use is refused', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 500);
    const rewardId = await offered(api, programId, { name: '10 EUR off', type: 'DISCOUNT_VOUCHER', campaignId: await discountCampaign(api), stock: 5 }, 200);

    const redeemed = await redeem(api, card.id, rewardId, { idempotencyKey: 'rr-1' });
    expect(redeemed.body).toMatchObject({ ok: true, rewardRedemption: { rewardId, points: 200, status: 'COMPLETED', issued: { voucherCode: expect.stringMatching(/^RW-/) } }, member: { balance: 300 } });
    const replay = await redeem(api, card.id, rewardId, { idempotencyKey: 'rr-1' });
    expect(replay.body).toMatchObject({ ok: true, idempotent: true, rewardRedemption: { id: redeemed.body.rewardRedemption.id } });
    expect((await member(api, card.id)).balance).toBe(300);
    expect((await api.get(`/api/v1/rewards/${rewardId}`)).body).toMatchObject({ stock: 4, redeemed: 1 });

    const code = redeemed.body.rewardRedemption.issued.voucherCode;
    expect((await api.get(`/api/v1/vouchers/${code}`)).body).toMatchObject({ customerId: card.customerId, discount: { type: 'AMOUNT', amountOff: 1_000 } });
    const stranger = await api.post(`/api/v1/vouchers/${code}/redemption`, { order: { amount: 5_000, currency: 'EUR' }, customer: { sourceId: 'stranger' } });
    expect(stranger.body).toMatchObject({ ok: false, code: 'voucher_assigned_to_other_customer' });
    const used = await api.post(`/api/v1/vouchers/${code}/redemption`, { order: { amount: 5_000, currency: 'EUR' }, customer: { id: card.customerId } });
    expect(used.body).toMatchObject({ ok: true, redemption: { amount: 1_000 } });
    const refund = await api.post(`/api/v1/loyalty/reward-redemptions/${redeemed.body.rewardRedemption.id}/refund`, {});
    expect(refund.body).toMatchObject({ ok: false, code: 'reward_already_used' });
    expect((await member(api, card.id)).balance).toBe(300);

    const events = await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = 'loyalty.reward.redeemed'`, [workspaceId]);
    expect(events.rows.map((r) => r.payload)).toEqual([expect.objectContaining({ memberId: card.id, points: 200, rewardId, issued: { voucherCode: code } })]);
  });

  it('a refund gives the points back into the buckets they came from, the stock back, and disables the unused voucher', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    const soon = new Date(Date.now() + 3 * 86_400_000).toISOString();
    await addPoints(api, card.id, 100, { expiresAt: soon });
    await addPoints(api, card.id, 300);
    const rewardId = await offered(api, programId, { name: 'Coupon', type: 'DISCOUNT_VOUCHER', campaignId: await discountCampaign(api), stock: 1 }, 250);
    const redeemed = await redeem(api, card.id, rewardId);
    expect(redeemed.body.ok).toBe(true);
    const buckets = async () => (await service.pool.query(`SELECT remaining FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY expires_at NULLS LAST`, [card.id])).rows.map((r) => Number(r.remaining));
    expect(await buckets()).toEqual([0, 150]);
    expect((await redeem(api, card.id, rewardId)).body).toMatchObject({ ok: false, code: 'reward_out_of_stock' });

    const refund = await api.post(`/api/v1/loyalty/reward-redemptions/${redeemed.body.rewardRedemption.id}/refund`, {});
    expect(refund.body).toMatchObject({ ok: true, rewardRedemption: { status: 'REFUNDED' }, member: { balance: 400 } });
    expect(await buckets()).toEqual([100, 300]);
    expect((await api.get(`/api/v1/rewards/${rewardId}`)).body).toMatchObject({ stock: 1, redeemed: 0 });
    const code = redeemed.body.rewardRedemption.issued.voucherCode;
    expect((await api.post(`/api/v1/vouchers/${code}/redemption`, { order: { amount: 5_000, currency: 'EUR' }, customer: { id: card.customerId } })).body).toMatchObject({ ok: false, code: 'voucher_disabled' });
    expect((await api.post(`/api/v1/loyalty/reward-redemptions/${redeemed.body.rewardRedemption.id}/refund`, {})).status).toBe(409);
    expect((await transactions(api, card.id)).map((e) => e.type)).toEqual(['REWARD_REFUND', 'REWARD_REDEMPTION', 'ADJUSTMENT', 'ADJUSTMENT']);
  });

  it('GIFT_CREDITS onto the customer\'s gift card (made once, credited after), usable at checkout at once; LOYALTY_POINTS onto another program\'s card', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 1_000);
    const giftCampaign = await api.create('/api/v1/campaigns', { name: 'Gift cards', type: 'GIFT_VOUCHERS', currency: 'EUR' });
    const credits = await offered(api, programId, { name: '5 EUR credit', type: 'GIFT_CREDITS', campaignId: giftCampaign.id, amount: 500 }, 100);
    const first = await redeem(api, card.id, credits);
    const second = await redeem(api, card.id, credits);
    const giftCode = first.body.rewardRedemption.issued.voucherCode;
    expect(first.body.rewardRedemption.issued).toEqual({ voucherCode: giftCode, amount: 500 });
    expect(second.body.rewardRedemption.issued).toEqual({ voucherCode: giftCode, amount: 500 });
    expect((await api.get(`/api/v1/vouchers/${giftCode}`)).body).toMatchObject({ type: 'GIFT_CARD', customerId: card.customerId, gift: { balance: 1_000 } });
    const spent = await api.post(`/api/v1/vouchers/${giftCode}/redemption`, { order: { amount: 800, currency: 'EUR' }, customer: { id: card.customerId } });
    expect(spent.body).toMatchObject({ ok: true, redemption: { amount: 800 } });
    // 200 credits left: the second redemption's 500 cannot be taken back whole.
    expect((await api.post(`/api/v1/loyalty/reward-redemptions/${second.body.rewardRedemption.id}/refund`, {})).body).toMatchObject({ ok: false, code: 'reward_already_used' });
    const ledger = await api.get(`/api/v1/vouchers/${giftCode}/transactions`);
    expect(ledger.body.data.map((e: { type: string; amount: number }) => [e.type, e.amount])).toEqual([['REDEMPTION', -800], ['CREDITS_ADDED', 500], ['CREDITS_ADDED', 500]]);

    const partner = await createProgram(api, {}, 'Partner miles');
    const miles = await offered(api, programId, { name: '50 partner miles', type: 'LOYALTY_POINTS', campaignId: partner, amount: 50 }, 10);
    const moved = await redeem(api, card.id, miles);
    expect(moved.body).toMatchObject({ ok: true, rewardRedemption: { issued: { points: 50 } } });
    const partnerCards = (await api.get(`/api/v1/customers/${card.customerId}/loyalty`)).body.data;
    expect(partnerCards.find((c: { programId: string }) => c.programId === partner)).toMatchObject({ balance: 50 });
  });

  it('holds stock under races (stock 2, five members → exactly 2) and points under races (250 points, five redemptions of 100 → 2)', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const scarce = await offered(api, programId, { name: 'Limited', type: 'MATERIAL', stock: 2 }, 100);
    const members = await Promise.all(Array.from({ length: 5 }, () => joinMember(api, programId)));
    for (const m of members) await addPoints(api, m.id, 100);
    const stockRace = await Promise.all(members.map((m) => redeem(api, m.id, scarce)));
    expect(stockRace.filter((r) => r.body.ok)).toHaveLength(2);
    expect(stockRace.filter((r) => !r.body.ok).map((r) => r.body.code)).toEqual(['reward_out_of_stock', 'reward_out_of_stock', 'reward_out_of_stock']);
    expect((await api.get(`/api/v1/rewards/${scarce}`)).body).toMatchObject({ stock: 0, redeemed: 2 });

    const plenty = await offered(api, programId, { name: 'Sticker', type: 'MATERIAL' }, 100);
    const rich = await joinMember(api, programId);
    await addPoints(api, rich.id, 250);
    const pointsRace = await Promise.all(Array.from({ length: 5 }, () => redeem(api, rich.id, plenty)));
    expect(pointsRace.filter((r) => r.body.ok)).toHaveLength(2);
    expect(pointsRace.filter((r) => !r.body.ok).every((r) => r.body.code === 'loyalty_points_insufficient')).toBe(true);
    expect((await member(api, rich.id)).balance).toBe(50);
    expect((await api.get(`/api/v1/rewards/${plenty}`)).body).toMatchObject({ stock: null, redeemed: 2 });
  });

  it('keeps members racing for one reward waiting in turn, not each on a connection: another reward is redeemed meanwhile', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const scarce = await offered(api, programId, { name: 'Limited', type: 'MATERIAL', stock: 5 }, 100);
    const other = await offered(api, programId, { name: 'Sticker', type: 'MATERIAL' }, 100);
    const members = await Promise.all(Array.from({ length: 14 }, () => joinMember(api, programId)));
    for (const m of members) await addPoints(api, m.id, 200);
    const held = await holdRowLock(service.db.url, 'rewards', scarce);
    try {
      // 12 members against the test pool's 10 connections.
      const race = Promise.all(members.slice(0, 12).map((m) => redeem(api, m.id, scarce)));
      expect(await held.lockWaitersOnceWaiting('a redemption waiting on the reward')).toBe(1);
      expect((await redeem(api, members[13]!.id, other)).body.ok).toBe(true);
      await held.release();
      const outcomes = await race;
      expect(outcomes.map((o) => o.status)).toEqual(Array(12).fill(200));
      expect(outcomes.filter((o) => o.body.ok)).toHaveLength(5);
      expect(outcomes.filter((o) => !o.body.ok).every((o) => o.body.code === 'reward_out_of_stock')).toBe(true);
      expect((await api.get(`/api/v1/rewards/${scarce}`)).body).toMatchObject({ stock: 0, redeemed: 5 });
    } finally {
      await held.end();
    }
  });

  it('refuses what is not offered, inactive, over the per-member limit; nothing changes', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 1_000);
    const notOffered = await api.create('/api/v1/rewards', { name: 'Elsewhere', type: 'MATERIAL' });
    expect((await redeem(api, card.id, notOffered.id)).body).toMatchObject({ ok: false, code: 'reward_not_found' });
    const once = await offered(api, programId, { name: 'Once', type: 'MATERIAL', limitPerMember: 1 }, 10);
    expect((await redeem(api, card.id, once)).body.ok).toBe(true);
    expect((await redeem(api, card.id, once)).body).toMatchObject({ ok: false, code: 'reward_limit_reached' });
    const later = await offered(api, programId, { name: 'Later', type: 'MATERIAL', startDate: new Date(Date.now() + 86_400_000).toISOString() }, 10);
    expect((await redeem(api, card.id, later)).body).toMatchObject({ ok: false, code: 'reward_inactive' });
    expect((await member(api, card.id)).balance).toBe(990);
  });

  it('CUSTOM with MANUAL fulfillment waits in PENDING_FULFILLMENT; its event carries the type key and attributes; CANCELED refunds', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const card = await joinMember(api, programId);
    await addPoints(api, card.id, 500);
    const type = await api.create('/api/v1/reward-types', { key: 'tasting', name: 'Tasting', attributesSchema: { properties: { wine: { type: 'string', required: true } } }, fulfillment: 'MANUAL' });
    const rewardId = await offered(api, programId, { name: 'Tasting', type: 'CUSTOM', rewardTypeId: type.id, attributes: { wine: 'Riesling' } }, 200);
    const first = await redeem(api, card.id, rewardId);
    expect(first.body).toMatchObject({ ok: true, rewardRedemption: { status: 'PENDING_FULFILLMENT' }, member: { balance: 300 } });
    const event = await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = 'loyalty.reward.redeemed'`, [workspaceId]);
    expect(event.rows[0].payload).toMatchObject({ rewardTypeId: type.id, rewardTypeKey: 'tasting', fulfillment: 'MANUAL', attributes: { wine: 'Riesling' }, points: 200 });

    const done = await api.post(`/api/v1/loyalty/reward-redemptions/${first.body.rewardRedemption.id}/fulfillment`, { status: 'FULFILLED' });
    expect(done.body).toMatchObject({ ok: true, rewardRedemption: { status: 'FULFILLED' } });
    expect((await api.post(`/api/v1/loyalty/reward-redemptions/${first.body.rewardRedemption.id}/fulfillment`, { status: 'CANCELED' })).status).toBe(409);

    const second = await redeem(api, card.id, rewardId);
    const canceled = await api.post(`/api/v1/loyalty/reward-redemptions/${second.body.rewardRedemption.id}/fulfillment`, { status: 'CANCELED' });
    expect(canceled.body).toMatchObject({ ok: true, rewardRedemption: { status: 'CANCELED' }, member: { balance: 300 } });
    expect((await api.get(`/api/v1/loyalty/reward-redemptions/${second.body.rewardRedemption.id}`)).body.status).toBe('CANCELED');
  });
});
