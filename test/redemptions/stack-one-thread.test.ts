// Stacks whose vouchers one partition thread owns (one thread per process, the default on 2 cores): decided and
// committed in that thread's batches like redemptions, with no holds and no transaction of their own. Raced against
// each other and single redemptions on real PostgreSQL: limits and balances hold, stacks stay atomic, a key executes
// once, a refusal writes nothing but its key, and a session entry consumes its reservation.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

const order = { amount: 10_000, currency: 'EUR' };
const code = (prefix = 'T') => `${prefix}-${randomUUID().slice(0, 12)}`;

let service: TestService;
let api: ApiClient;
beforeAll(async () => {
  // One partition thread: every slot this process holds is served by it, so every stack is one thread's.
  service = await startTestService({ partitions: 1 });
  ({ api } = await service.newWorkspace());
});
afterAll(async () => service?.close());

async function voucher(body: Record<string, unknown> = {}) {
  const res = await api.post('/api/v1/vouchers', { code: code(), type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { code: string; id: string };
}

const stack = (vouchers: Array<Record<string, unknown>>, idempotencyKey: string = randomUUID(), extra: Record<string, unknown> = {}) =>
  api.post('/api/v1/redemptions/stack', { vouchers, order, idempotencyKey, ...extra });

async function counts(ids: string[]) {
  const { rows } = await service.pool.query<{ id: string; redeemed_count: number; gift_balance: number | null }>(
    'SELECT id, redeemed_count, gift_balance FROM vouchers WHERE id = ANY($1)',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

async function stackSizes(codes: string[]) {
  const { rows } = await service.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM redemptions WHERE voucher_code = ANY($1) AND stack_id IS NOT NULL GROUP BY stack_id',
    [codes],
  );
  return rows.map((r) => r.n);
}

describe('a stack within one partition thread', () => {
  it('commits in the partition: its insight figures are the partition writer\'s, not the stack committer\'s', async () => {
    const campaign = await api.post('/api/v1/campaigns', { name: code('C'), type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 } } });
    expect(campaign.status).toBe(201);
    const [x, y] = [await voucher({ campaignId: campaign.body.id, currency: undefined }), await voucher({ campaignId: campaign.body.id, currency: undefined })];
    const res = await stack([{ code: x.code }, { code: y.code }]);
    expect(res.body, JSON.stringify(res.body)).toMatchObject({ ok: true });
    const { rows } = await service.pool.query<{ writer: number; redemptions: number }>(
      'SELECT writer, redemptions::int FROM redemption_rollups WHERE campaign_id = $1',
      [campaign.body.id],
    );
    // The cross-thread way commits with writer -1 (the process's stack committer); partition 0 wrote these.
    expect(rows).toEqual([{ writer: 0, redemptions: 2 }]);
    const events = await service.pool.query<{ type: string }>(
      "SELECT type FROM events WHERE payload->>'stackId' = $1 OR payload->>'redemptionId' = ANY($2) ORDER BY id",
      [res.body.stackId, res.body.results.map((r: { redemptionId: string }) => r.redemptionId)],
    );
    expect(events.rows.map((e) => e.type)).toEqual(['voucher.redeemed', 'voucher.redeemed', 'voucher.stack.redeemed']);
  });

  it('never exceeds a limit nor a gift balance when stacks race single redemptions, and stays atomic', async () => {
    const limited = await voucher({ redemptionLimit: 30 });
    const other = await voucher({ redemptionLimit: 1_000 });
    const giftRes = await api.post('/api/v1/vouchers', { code: code('G'), type: 'GIFT_CARD', gift: { amount: 9_000, currency: 'EUR' } });
    expect(giftRes.status).toBe(201);
    const gift = giftRes.body as { code: string; id: string };
    // 60 stacks of three (each 300 credits: 30 fit the balance, 30 the limit) and 20 single redemptions of the limit.
    const stacks = Array.from({ length: 60 }, () => stack([{ code: limited.code }, { code: other.code }, { code: gift.code, amount: 300 }]));
    const singles = Array.from({ length: 20 }, () => api.post(`/api/v1/vouchers/${limited.code}/redemption`, { order }));
    const [stackResults, singleResults] = await Promise.all([Promise.all(stacks), Promise.all(singles)]);
    expect([...stackResults, ...singleResults].map((r) => r.status)).toEqual([...stackResults, ...singleResults].map(() => 200));
    const okStacks = stackResults.filter((r) => r.body.ok).length;
    const okSingles = singleResults.filter((r) => r.body.ok).length;
    expect(okStacks + okSingles).toBe(30);
    const after = await counts([limited.id, other.id, gift.id]);
    expect(after.get(limited.id)!.redeemed_count).toBe(30);
    expect(after.get(other.id)!.redeemed_count).toBe(okStacks);
    expect(after.get(gift.id)!.gift_balance).toBe(9_000 - 300 * okStacks);
    const sizes = await stackSizes([limited.code, other.code, gift.code]);
    expect(sizes).toHaveLength(okStacks);
    expect(sizes.every((n) => n === 3)).toBe(true);
    // The refused ones name the limit; nothing of theirs was written.
    for (const r of stackResults.filter((s) => !s.body.ok)) expect(r.body.code).toBe('redemption_limit_reached');
  });

  it('executes a key once when the same stack races itself, and refuses the key for another body', async () => {
    const [x, y] = [await voucher({ redemptionLimit: 100 }), await voucher({ redemptionLimit: 100 })];
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 20 }, () => stack([{ code: x.code }, { code: y.code }], key)));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    expect(new Set(results.map((r) => r.body.stackId)).size).toBe(1);
    expect(results.filter((r) => !r.body.idempotent)).toHaveLength(1);
    const after = await counts([x.id, y.id]);
    expect([after.get(x.id)!.redeemed_count, after.get(y.id)!.redeemed_count]).toEqual([1, 1]);
    const again = await stack([{ code: x.code }, { code: y.code }], key);
    expect(again.body).toMatchObject({ ok: true, idempotent: true, stackId: results[0]!.body.stackId });
    const other = await stack([{ code: y.code }, { code: x.code }], key);
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('idempotency_conflict');
  });

  it('writes nothing of a refused stack but its key, which answers the same refusal again', async () => {
    const spent = await voucher({ redemptionLimit: 1 });
    const fine = await voucher({ redemptionLimit: 10 });
    expect((await api.post(`/api/v1/vouchers/${spent.code}/redemption`, { order })).body.ok).toBe(true);
    const key = randomUUID();
    const refused = await stack([{ code: fine.code }, { code: spent.code }], key);
    expect(refused.body).toMatchObject({ ok: false, code: 'redemption_limit_reached' });
    expect(refused.body.results.map((r: { code: string }) => r.code)).toEqual(['skipped', 'redemption_limit_reached']);
    expect((await counts([fine.id])).get(fine.id)!.redeemed_count).toBe(0);
    expect(await stackSizes([fine.code, spent.code])).toEqual([]);
    const replay = await stack([{ code: fine.code }, { code: spent.code }], key);
    expect(replay.body).toMatchObject({ ok: false, code: 'redemption_limit_reached', idempotent: true });
    const unknown = await stack([{ code: fine.code }, { code: code('NONE') }]);
    expect(unknown.body).toMatchObject({ ok: false, code: 'voucher_not_found' });
  });

  it('lets a stack entry consume its session; racing stacks without it cannot take the reserved use', async () => {
    const v = await voucher({ redemptionLimit: 3 });
    const w = await voucher();
    expect((await api.post(`/api/v1/vouchers/${v.code}/validate`, { order, session: { key: 'one-thread-cart' } })).body.valid).toBe(true);
    const others = await Promise.all(Array.from({ length: 10 }, () => stack([{ code: v.code }, { code: w.code }])));
    expect(others.filter((r) => r.body.ok)).toHaveLength(2);
    const own = await stack([{ code: v.code, session: { key: 'one-thread-cart' } }, { code: w.code }]);
    expect(own.body, JSON.stringify(own.body)).toMatchObject({ ok: true });
    const { rows } = await service.pool.query('SELECT 1 FROM voucher_sessions WHERE voucher_id = $1', [v.id]);
    expect(rows).toEqual([]);
    expect((await counts([v.id])).get(v.id)!.redeemed_count).toBe(3);
  });
});
