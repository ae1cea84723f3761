// Every write operation of the registry, called once through the real service: each commits exactly one audit entry
// naming its actor and request, redemptions none; an operation the scenario does not cover fails the test, so a new
// mutation cannot land unaudited. A mutation whose audit entry cannot be written leaves no change behind.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/registry.js';
import { defaultServiceSettings } from '../../src/composition.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let key: string;
let keyId: string;

interface Called {
  status: number;
  body: any;
  requestId: string | null;
}

async function call(name: string, input: Record<string, unknown> = {}): Promise<Called> {
  const res = await fetch(`${service.baseUrl}/api/rpc/${name}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': 'audit-test/1.0' },
    body: JSON.stringify(input),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, requestId: res.headers.get('x-request-id') };
}

async function entriesOf(requestId: string | null) {
  const { rows } = await service.pool.query(
    'SELECT operation, actor_type, actor_id, actor_label, resource_type, resource_id, request_id, ip, user_agent FROM audit_entries WHERE request_id = $1',
    [requestId],
  );
  return rows;
}

const exercised = new Set<string>();

/** Calls a write operation and checks its one audit entry; returns the output. */
async function write(name: string, input: Record<string, unknown> = {}): Promise<any> {
  const result = await call(name, input);
  expect(result.status, `${name}: ${JSON.stringify(result.body)}`).toBeLessThan(300);
  const entries = await entriesOf(result.requestId);
  expect(entries, name).toHaveLength(1);
  expect(entries[0]).toMatchObject({ operation: name, actor_type: 'api_key', actor_id: keyId, request_id: result.requestId, user_agent: 'audit-test/1.0' });
  expect(entries[0].actor_label).toContain(key.split('_')[1]);
  expect(entries[0].ip).toBeTruthy();
  exercised.add(name);
  return result.body;
}

/** Signs in (or accepts an invitation) over REST; the session cookie and the staff user. */
async function staffSessionOf(path: string, body: Record<string, unknown>): Promise<{ cookie: string; staffUserId: string }> {
  const res = await fetch(service.baseUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, path).toBe(201);
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, staffUserId: ((await res.json()) as any).staffUser.id };
}

/** A write operation called with a staff session cookie (from the service's own origin); its one entry names the staff user. */
async function asStaff(name: string, input: Record<string, unknown>, session: { cookie: string; staffUserId: string }): Promise<void> {
  const res = await fetch(`${service.baseUrl}/api/rpc/${name}`, {
    method: 'POST',
    headers: { cookie: session.cookie, origin: service.baseUrl, 'content-type': 'application/json', 'user-agent': 'audit-test/1.0' },
    body: JSON.stringify(input),
  });
  expect(res.status, `${name}: ${await res.clone().text()}`).toBeLessThan(300);
  const entries = await entriesOf(res.headers.get('x-request-id'));
  expect(entries, name).toHaveLength(1);
  expect(entries[0]).toMatchObject({ operation: name, actor_type: 'staff_user', actor_id: session.staffUserId, actor_label: 'audited-member@example.com' });
  exercised.add(name);
}

beforeAll(async () => {
  service = await startTestService({ settings: defaultServiceSettings({ webhooks: { allowPrivateTargets: true, timeoutMs: 1_000, retryScheduleMs: [1_000] } }) });
  const admin = await service.adminApi();
  key = admin.key!;
  const prefix = key.split('_')[1];
  keyId = (await service.pool.query('SELECT id FROM api_keys WHERE prefix = $1', [prefix])).rows[0].id;
});
afterAll(async () => service?.close());

describe('the audit log of every mutation', () => {
  it('records exactly one entry for each write operation of the registry, and none for redemptions', async () => {
    const campaign = await write('campaigns.create', {
      name: 'audited',
      type: 'DISCOUNT_COUPONS',
      voucher: { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } },
    });
    await write('campaigns.update', { id: campaign.id, name: 'audited again' });
    const rule = await write('validationRules.create', { name: 'big orders', conditions: { field: 'order.amount', op: 'gte', value: 1 } });
    await write('validationRules.update', { id: rule.id, name: 'bigger orders' });

    await write('vouchers.create', { code: 'AUD-1', campaignId: campaign.id, type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } });
    await write('vouchers.update', { code: 'AUD-1', metadata: { note: 'x' } });
    await write('vouchers.disable', { code: 'AUD-1' });
    await write('vouchers.enable', { code: 'AUD-1' });
    const reserved = await call('vouchers.validate', { code: 'AUD-1', order: { amount: 1_000, currency: 'EUR' }, session: { key: 'aud-session' } });
    expect(reserved.body.session?.key, JSON.stringify(reserved.body)).toBe('aud-session');
    expect(await entriesOf(reserved.requestId)).toHaveLength(0);
    await write('redemptions.releaseSession', { code: 'AUD-1', key: 'aud-session' });
    await write('vouchers.generate', { id: campaign.id, count: 3 });
    // A bulk import: one entry for the import (its rows are merged in the background without entries of their own).
    const imported = await write('vouchers.import', { campaignId: campaign.id, rows: 'code\nAUD-IMP-1\nAUD-IMP-2\n' });
    expect(imported).toMatchObject({ kind: 'vouchers', counts: { read: 2 } });
    await write('customers.import', { format: 'ndjson', rows: '{"sourceId":"aud-imp-1"}\n' });
    await write('vouchers.create', { code: 'AUD-GIFT', type: 'GIFT_CARD', gift: { amount: 1_000, currency: 'EUR' } });
    await write('vouchers.adjustBalance', { code: 'AUD-GIFT', amount: 500 });

    const customer = await write('customers.create', { sourceId: 'aud-1', email: 'aud@example.com' });
    await write('customers.update', { id: customer.id, name: 'Audrey' });

    const redeemed = await call('redemptions.redeem', { code: 'AUD-1', order: { amount: 1_000, currency: 'EUR' }, customer: { id: customer.id } });
    expect(redeemed.body.ok).toBe(true);
    expect(await entriesOf(redeemed.requestId)).toHaveLength(0);
    const rolledBack = await write('redemptions.rollback', { id: redeemed.body.redemption.id });
    expect(rolledBack.ok).toBe(true);
    const again = await call('redemptions.rollback', { id: redeemed.body.redemption.id });
    expect(again.body).toMatchObject({ ok: false, code: 'redemption_already_rolled_back' });
    expect(await entriesOf(again.requestId)).toHaveLength(0);

    const order = await write('orders.create', { amount: 1_000, currency: 'EUR', customer: { id: customer.id } });
    await write('orders.update', { id: order.id, status: 'PAID' });
    await write('orders.return', { id: order.id, amount: 100, idempotencyKey: 'aud-return' });

    const segment = await write('segments.create', { name: 'friends', type: 'STATIC' });
    await write('segments.update', { id: segment.id, name: 'close friends' });
    await write('segments.addMembers', { id: segment.id, customerIds: [customer.id] });
    await write('segments.removeMembers', { id: segment.id, customerIds: [customer.id] });

    const promotion = await write('campaigns.create', { name: 'promo', type: 'PROMOTION' });
    const tier = await write('promotions.createTier', { id: promotion.id, name: 'five', discount: { type: 'PERCENT', percentOff: 5 } });
    await write('promotions.updateTier', { id: tier.id, name: 'five percent' });
    const tierRedeemed = await call('promotions.redeemTier', { id: tier.id, order: { amount: 1_000, currency: 'EUR' } });
    expect(tierRedeemed.body.ok, JSON.stringify(tierRedeemed.body)).toBe(true);
    expect(await entriesOf(tierRedeemed.requestId)).toHaveLength(0);
    await write('promotions.deleteTier', { id: tier.id });

    await write('publications.create', { campaignId: campaign.id, customer: { id: customer.id } });

    // Loyalty: members, points (a refusal writes no entry), rules, tiers, custom events.
    const program = await write('campaigns.create', { name: 'club', type: 'LOYALTY_PROGRAM' });
    const loyaltyMember = await write('loyalty.createMember', { id: program.id, customer: { id: customer.id } });
    const friend = await write('loyalty.createMember', { id: program.id, customer: { sourceId: 'aud-friend' } });
    await write('loyalty.adjustPoints', { id: loyaltyMember.id, points: 100 });
    const overdraft = await call('loyalty.adjustPoints', { id: loyaltyMember.id, points: -1_000 });
    expect(overdraft.body).toMatchObject({ ok: false, code: 'loyalty_points_insufficient' });
    expect(await entriesOf(overdraft.requestId)).toHaveLength(0);
    await write('loyalty.transferPoints', { id: loyaltyMember.id, toMemberId: friend.id, points: 10 });
    const earningRule = await write('loyalty.createEarningRule', { id: program.id, name: 'review', trigger: 'CUSTOM_EVENT', eventName: 'review', points: { type: 'FIXED', points: 5 } });
    await write('loyalty.updateEarningRule', { id: earningRule.id, name: 'reviews' });
    await write('loyalty.recordCustomEvent', { name: 'review', customer: { id: customer.id } });
    await write('loyalty.deleteEarningRule', { id: earningRule.id });
    const loyaltyTier = await write('loyalty.createTier', { id: program.id, name: 'Silver', minPoints: 1 });
    await write('loyalty.updateTier', { id: program.id, tierId: loyaltyTier.id, name: 'Gold' });
    await write('loyalty.deleteTier', { id: program.id, tierId: loyaltyTier.id });
    // Rewards: the catalog, a program's offer, a redemption (and a refusal, which writes none), refund, fulfillment.
    const rewardType = await write('rewardTypes.create', { key: 'audited', name: 'Audited', attributesSchema: { properties: { note: { type: 'string' } } }, fulfillment: 'MANUAL' });
    const material = await write('rewards.create', { name: 'Mug', type: 'MATERIAL' });
    const custom = await write('rewards.create', { name: 'Visit', type: 'CUSTOM', rewardTypeId: rewardType.id, attributes: { note: 'hi' } });
    await write('rewards.update', { id: material.id, stock: 5 });
    await write('rewards.addCodes', { id: custom.id, codes: ['AUDIT-1'] });
    await write('loyalty.offerReward', { id: program.id, rewardId: material.id, points: 50 });
    await write('loyalty.offerReward', { id: program.id, rewardId: custom.id, points: 10 });
    const tooDear = await call('loyalty.redeemReward', { id: friend.id, rewardId: material.id });
    expect(tooDear.body).toMatchObject({ ok: false, code: 'loyalty_points_insufficient' });
    expect(await entriesOf(tooDear.requestId)).toHaveLength(0);
    const rewardRedemption = await write('loyalty.redeemReward', { id: loyaltyMember.id, rewardId: material.id });
    await write('loyalty.refundRewardRedemption', { id: rewardRedemption.rewardRedemption.id });
    const pending = await write('loyalty.redeemReward', { id: loyaltyMember.id, rewardId: custom.id });
    await write('loyalty.fulfilRewardRedemption', { id: pending.rewardRedemption.id, status: 'FULFILLED' });
    await write('loyalty.withdrawReward', { id: program.id, rewardId: custom.id });
    const unused = await write('rewards.create', { name: 'Unused', type: 'MATERIAL' });
    await write('rewards.delete', { id: unused.id });
    const unusedType = await write('rewardTypes.create', { key: 'unused', name: 'Unused', attributesSchema: { properties: {} }, fulfillment: 'NONE' });
    await write('rewardTypes.delete', { id: unusedType.id });
    const referralProgram = await write('campaigns.create', {
      name: 'audited referrals', type: 'REFERRAL_PROGRAM', voucher: { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } },
      referral: { referrerRewards: [{ rewardId: material.id }] },
    });
    await write('referrals.createCode', { id: referralProgram.id, customer: { id: customer.id } });
    // Asking again finds the code: nothing changes, no entry.
    expect((await call('referrals.createCode', { id: referralProgram.id, customer: { id: customer.id } })).status).toBe(200);

    const endpoint = await write('webhooks.create', { url: 'http://127.0.0.1:9/hook', events: '*' });
    await write('webhooks.update', { id: endpoint.id, description: 'audit' });
    await write('webhooks.rotateSecret', { id: endpoint.id });
    const eventId = (await service.pool.query('SELECT id FROM events ORDER BY created_at LIMIT 1')).rows[0].id;
    const delivery = await write('webhooks.replayEvent', { id: endpoint.id, eventId });
    await write('webhooks.replayDelivery', { id: endpoint.id, deliveryId: delivery.id });
    await write('webhooks.delete', { id: endpoint.id });

    const made = await write('apiKeys.create', { name: 'reader', scopes: ['campaigns:read'] });
    await write('apiKeys.update', { id: made.id, rateLimit: { requestsPerSecond: 50 } });
    await write('apiKeys.revoke', { id: made.id });
    await write('workspaces.create', { name: `audited ${randomBytes(3).toString('hex')}` });
    await write('workspaces.update', { stackLimit: 6 });

    // Staff: invitations and staff users by the key; sign-out and a password change by the staff user's own session.
    await write('staffInvitations.create', { email: 'audited-staff@example.com', role: 'member' });
    const invited = await write('staffInvitations.create', { email: 'audited-member@example.com', role: 'member' });
    const staffCookie = await staffSessionOf('/api/v1/staff-invitations/accept', { token: invited.token, password: 'audited password' });
    await write('staffUsers.update', { id: staffCookie.staffUserId, name: 'Audited' });
    await asStaff('sessions.delete', {}, staffCookie);
    const signedInAgain = await staffSessionOf('/api/v1/sessions', { email: 'audited-member@example.com', password: 'audited password' });
    await asStaff('sessions.changePassword', { currentPassword: 'audited password', newPassword: 'audited password 2' }, signedInAgain);
    await write('staffUsers.delete', { id: staffCookie.staffUserId });

    await write('validationRules.delete', { id: rule.id });
    await write('segments.delete', { id: segment.id });
    const doomed = await write('customers.create', { sourceId: 'aud-2' });
    await write('customers.delete', { id: doomed.id });
    await write('vouchers.create', { code: 'AUD-DEL', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 1 } });
    await write('vouchers.delete', { code: 'AUD-DEL' });
    const gone = await write('campaigns.create', { name: 'short-lived', type: 'DISCOUNT_COUPONS' });
    await write('campaigns.delete', { id: gone.id });

    const writes = operations.filter((op) => op.effect === 'write').map((op) => op.name);
    expect(writes.filter((name) => !exercised.has(name))).toEqual([]);
  });
});

describe('one transaction for the change and its entry', () => {
  async function refuseEntriesOf(operation: string): Promise<void> {
    await service.pool.query(`
      CREATE OR REPLACE FUNCTION refuse_test_entry() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.operation = '${operation}' THEN RAISE EXCEPTION 'audit entry refused by the test'; END IF;
        RETURN NEW;
      END $$;
      DROP TRIGGER IF EXISTS refuse_test_entry ON audit_entries;
      CREATE TRIGGER refuse_test_entry BEFORE INSERT ON audit_entries FOR EACH ROW EXECUTE FUNCTION refuse_test_entry();`);
  }

  afterAll(async () => {
    await service.pool.query('DROP TRIGGER IF EXISTS refuse_test_entry ON audit_entries');
  });

  it('leaves no campaign behind when its entry cannot be written', async () => {
    await refuseEntriesOf('campaigns.create');
    const before = (await service.pool.query('SELECT count(*)::int AS n FROM campaigns')).rows[0].n;
    const failed = await call('campaigns.create', { name: 'never', type: 'DISCOUNT_COUPONS' });
    expect(failed.status).toBe(500);
    expect(failed.body.code).toBe('internal_error');
    expect(JSON.stringify(failed.body)).not.toContain('refused by the test');
    expect((await service.pool.query('SELECT count(*)::int AS n FROM campaigns')).rows[0].n).toBe(before);
    expect((await service.pool.query("SELECT count(*)::int AS n FROM events WHERE type = 'campaign.created' AND payload->'campaign'->>'name' = 'never'")).rows[0].n).toBe(0);
  });

  it('leaves a voucher unchanged when the entry of its update cannot be written', async () => {
    await refuseEntriesOf('none');
    const created = await write('vouchers.create', { code: 'AUD-TX', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 3 } });
    await refuseEntriesOf('vouchers.update');
    expect((await call('vouchers.update', { code: 'AUD-TX', discount: { type: 'PERCENT', percentOff: 50 } })).status).toBe(500);
    const read = await call('vouchers.get', { code: 'AUD-TX' });
    expect(read.body.discount).toEqual(created.discount);
  });

  it('leaves a redemption active when the entry of its rollback cannot be written in the engine batch', async () => {
    await refuseEntriesOf('none');
    await write('vouchers.create', { code: 'AUD-RB', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 3 } });
    const redeemed = await call('redemptions.redeem', { code: 'AUD-RB', order: { amount: 1_000, currency: 'EUR' } });
    await refuseEntriesOf('redemptions.rollback');
    const failed = await call('redemptions.rollback', { id: redeemed.body.redemption.id });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    await refuseEntriesOf('none');
    const rolledBack = await call('redemptions.rollback', { id: redeemed.body.redemption.id });
    expect(rolledBack.body.ok).toBe(true);
    expect(await entriesOf(rolledBack.requestId)).toHaveLength(1);
  });
});
