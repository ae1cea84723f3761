// Concurrency claims, proven by racing many real HTTP requests: limits, balances, per-customer limits, idempotency
// and stacks never over-redeem, in one service and in two service processes' worth of engines on one database.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { pruneExpiredIdempotencyKeys } from '../../src/domains/redemptions/index.js';
import { SLOTS } from '../../src/engine/leases/partition-leases.js';
import { partitionOf } from '../../src/engine/partition-router.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let second: TestService;
let api: ApiClient;
let apiB: ApiClient;
let workspaceId: string;
beforeAll(async () => {
  service = await startTestService();
  // A second service (its own engine, partitions and caches) on the same database: what two web processes are.
  second = await startTestService({ database: service.db });
  const ws = await service.newWorkspace();
  api = ws.api;
  workspaceId = ws.workspaceId;
  apiB = second.api(ws.key);
});
afterAll(async () => {
  await second?.close();
  await service?.close();
});

const order = { amount: 10_000, currency: 'EUR' };

async function voucher(body: Record<string, unknown>) {
  const res = await api.post('/api/v1/vouchers', { code: `R-${randomUUID().slice(0, 12)}`, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, ...(body.campaignId === undefined ? { currency: 'EUR' } : {}), ...body });
  expect(res.status).toBe(201);
  return res.body as { code: string; id: string };
}

const redeem = (client: ApiClient, code: string, body: Record<string, unknown> = { order }) => client.post(`/api/v1/vouchers/${code}/redemption`, body);

/**
 * Two codes of different slots that one partition thread serves: slots held by the same process (the leases) and
 * equal modulo its `threads` threads.
 */
async function codesInOneThread(threads: number): Promise<[string, string]> {
  const { rows } = await service.pool.query<{ slot: number; owner: string | null }>('SELECT slot, owner FROM partition_leases');
  const ownerOf = new Map(rows.map((r) => [r.slot, r.owner]));
  const first = `R-${randomUUID().slice(0, 12)}`;
  const slot = partitionOf(workspaceId, first, SLOTS);
  for (;;) {
    const code = `R-${randomUUID().slice(0, 12)}`;
    const other = partitionOf(workspaceId, code, SLOTS);
    if (other !== slot && other % threads === slot % threads && ownerOf.get(other) === ownerOf.get(slot)) return [first, code];
  }
}

async function voucherRow(id: string) {
  const { rows } = await service.pool.query<{ redeemed_count: number; gift_balance: number | null }>('SELECT redeemed_count, gift_balance FROM vouchers WHERE id = $1', [id]);
  return rows[0]!;
}

async function successfulRedemptions(code: string) {
  const { rows } = await service.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM redemptions WHERE voucher_code = $1 AND status = 'SUCCEEDED'", [code]);
  return rows[0]!.n;
}

async function ledgerOf(id: string) {
  const { rows } = await service.pool.query<{ type: string; amount: number; balance_after: number }>(
    'SELECT type, amount, balance_after FROM gift_ledger_entries WHERE voucher_id = $1',
    [id],
  );
  return rows;
}

describe.each([
  ['one service', () => [api, api]],
  ['two services on one database', () => [api, apiB]],
])('races: %s', (_name, clients) => {
  it('a limit of 50 under 400 concurrent redemptions gives exactly 50', async () => {
    const [a, b] = clients();
    const v = await voucher({ redemptionLimit: 50 });
    const results = await Promise.all(Array.from({ length: 400 }, (_, i) => redeem(i % 2 ? a! : b!, v.code)));
    const odd = results.filter((r) => r.status !== 200).map((r) => r.body);
    expect(odd, JSON.stringify(odd.slice(0, 3))).toEqual([]);
    expect(results.filter((r) => r.body.ok)).toHaveLength(50);
    expect(results.filter((r) => !r.body.ok).every((r) => r.body.code === 'redemption_limit_reached')).toBe(true);
    expect((await voucherRow(v.id)).redeemed_count).toBe(50);
    expect(await successfulRedemptions(v.code)).toBe(50);
  });

  it('a gift balance of 10,000 under 300 concurrent takes of 100 gives exactly 100 takes; the ledger sums to the balance', async () => {
    const [a, b] = clients();
    const g = await voucher({ type: 'GIFT_CARD', discount: undefined, gift: { amount: 10_000, currency: 'EUR' } });
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => redeem(i % 2 ? a! : b!, g.code, { amount: 100 })));
    const odd = results.filter((r) => r.status !== 200).map((r) => r.body);
    expect(odd, JSON.stringify(odd.slice(0, 3))).toEqual([]);
    expect(results.filter((r) => r.body.ok)).toHaveLength(100);
    expect(results.filter((r) => !r.body.ok).every((r) => ['gift_balance_zero', 'gift_balance_insufficient'].includes(r.body.code))).toBe(true);
    expect((await voucherRow(g.id)).gift_balance).toBe(0);
    const ledger = await ledgerOf(g.id);
    expect(ledger.reduce((sum, e) => sum + e.amount, 0)).toBe(0);
    // Each take left its own balance behind: 9,900, 9,800, ... 0, every one once, whatever the commit order.
    const after = ledger.filter((e) => e.type === 'REDEMPTION').map((e) => e.balance_after).sort((x, y) => x - y);
    expect(after).toEqual(Array.from({ length: 100 }, (_, i) => i * 100));
  });

  it('a per-customer limit of 3 under 60 concurrent redemptions by one customer gives exactly 3', async () => {
    const [a, b] = clients();
    const v = await voucher({ perCustomerLimit: 3 });
    const customer = { sourceId: `racer-${randomUUID()}` };
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => redeem(i % 2 ? a! : b!, v.code, { order, customer })));
    expect(results.filter((r) => r.body.ok)).toHaveLength(3);
    expect(results.filter((r) => !r.body.ok).every((r) => r.body.code === 'per_user_redemption_limit_reached')).toBe(true);
    const customers = await service.pool.query('SELECT count(*)::int AS n FROM customers WHERE source_id = $1', [customer.sourceId]);
    expect(customers.rows[0].n).toBe(1);
  });

  it('a per-customer limit set after redemptions counts them, a rollback gives a use back, and the commit guard counts stored redemptions', async () => {
    const [a, b] = clients();
    const v = await voucher({});
    const [one, two] = [{ sourceId: `early-${randomUUID()}` }, { sourceId: `early-${randomUUID()}` }];
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) mine.push((await redeem(a!, v.code, { order, customer: one })).body.redemption.id);
    expect((await redeem(b!, v.code, { order, customer: two })).body.ok).toBe(true);
    expect((await api.patch(`/api/v1/vouchers/${v.code}`, { perCustomerLimit: 4 })).status).toBe(200);
    const race = async (customer: { sourceId: string }) => {
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => redeem(i % 2 ? a! : b!, v.code, { order, customer })));
      expect(results.filter((r) => !r.body.ok).every((r) => r.body.code === 'per_user_redemption_limit_reached')).toBe(true);
      return results.filter((r) => r.body.ok).length;
    };
    expect(await race(one)).toBe(1);
    expect(await race(two)).toBe(3);
    expect((await api.post(`/api/v1/redemptions/${mine[0]}/rollback`, {})).body.ok).toBe(true);
    expect(await race(one)).toBe(1);
    // A redemption stored behind the engine's back (as another writer's would be): the partitions' counts say 3 of 4
    // for a fresh customer, the commit's guard counts 4 and refuses; the count is read again and the answer is a refusal.
    const three = { sourceId: `early-${randomUUID()}` };
    for (let i = 0; i < 3; i++) expect((await redeem(a!, v.code, { order, customer: three })).body.ok).toBe(true);
    await service.pool.query(
      `INSERT INTO redemptions (workspace_id, id, voucher_id, voucher_code, amount, kind, customer_id, status)
       SELECT workspace_id, gen_random_uuid(), voucher_id, voucher_code, amount, kind, customer_id, 'SUCCEEDED' FROM redemptions
        WHERE voucher_id = $1 AND customer_id = (SELECT id FROM customers WHERE source_id = $2) LIMIT 1`,
      [v.id, three.sourceId],
    );
    const refused = await redeem(a!, v.code, { order, customer: three });
    expect(refused.body).toMatchObject({ ok: false, code: 'per_user_redemption_limit_reached' });
    const stored = await service.pool.query<{ customer: string; n: number }>(
      `SELECT c.source_id AS customer, count(*)::int AS n FROM redemptions r JOIN customers c ON c.id = r.customer_id
        WHERE r.voucher_id = $1 AND r.status = 'SUCCEEDED' GROUP BY 1`,
      [v.id],
    );
    expect(Object.fromEntries(stored.rows.map((r) => [r.customer, r.n]))).toEqual({ [one.sourceId]: 4, [two.sourceId]: 4, [three.sourceId]: 4 });
  });

  it('20 concurrent requests with one idempotency key execute once', async () => {
    const [a, b] = clients();
    const v = await voucher({});
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => redeem(i % 2 ? a! : b!, v.code, { order, idempotencyKey: key })));
    expect(await successfulRedemptions(v.code)).toBe(1);
    const executed = results.filter((r) => r.status === 200 && r.body.ok);
    expect(executed.length).toBeGreaterThan(0);
    // Every answer is the one execution (first or replayed), or a 409 while it ran elsewhere; never a second one.
    expect(new Set(executed.map((r) => r.body.redemption.id)).size).toBe(1);
    expect(results.every((r) => r.status === 200 || (r.status === 409 && r.body.code === 'idempotency_conflict'))).toBe(true);
    expect(results.filter((r) => r.status === 200 && !r.body.idempotent)).toHaveLength(1);
  });

  it('stacks racing single redemptions of the same limited codes never exceed a limit and stay atomic', async () => {
    const [a, b] = clients();
    const x = await voucher({ redemptionLimit: 30 });
    const y = await voucher({ redemptionLimit: 30 });
    const stacks = Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? a! : b!).post('/api/v1/redemptions/stack', { vouchers: [{ code: x.code }, { code: y.code }], order, idempotencyKey: randomUUID() }),
    );
    const singles = Array.from({ length: 40 }, (_, i) => redeem(i % 2 ? a! : b!, i % 4 < 2 ? x.code : y.code));
    const [stackResults, singleResults] = await Promise.all([Promise.all(stacks), Promise.all(singles)]);
    expect([...stackResults, ...singleResults].every((r) => r.status === 200)).toBe(true);
    const okStacks = stackResults.filter((r) => r.body.ok).length;
    const okX = singleResults.filter((r, i) => r.body.ok && i % 4 < 2).length;
    const okY = singleResults.filter((r, i) => r.body.ok && i % 4 >= 2).length;
    expect((await voucherRow(x.id)).redeemed_count).toBe(okStacks + okX);
    expect((await voucherRow(y.id)).redeemed_count).toBe(okStacks + okY);
    expect(okStacks + okX).toBeLessThanOrEqual(30);
    expect(okStacks + okY).toBeLessThanOrEqual(30);
    // Atomic: every stack id has both members or none.
    const members = await service.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM redemptions WHERE voucher_code = ANY($1) AND stack_id IS NOT NULL GROUP BY stack_id',
      [[x.code, y.code]],
    );
    expect(members.rows.every((r) => r.n === 2)).toBe(true);
    expect(members.rowCount).toBe(okStacks);
  });

  it('after racing stacks, validations answer from exact counters: the gift balance left, the limit reached at its last use', async () => {
    const [a, b] = clients();
    // Two slots served by one thread (the test services run 2 partition threads): each slot has its own hold.
    const [limitedCode, giftCode] = await codesInOneThread(2);
    const limited = await voucher({ code: limitedCode, redemptionLimit: 25 });
    const gift = await voucher({ code: giftCode, type: 'GIFT_CARD', gift: { amount: 10_000, currency: 'EUR' }, discount: undefined });
    const stacks = Array.from({ length: 12 }, (_, i) =>
      (i % 2 ? a! : b!).post('/api/v1/redemptions/stack', { vouchers: [{ code: limited.code }, { code: gift.code, amount: 300 }], order, idempotencyKey: randomUUID() }),
    );
    const singles = Array.from({ length: 6 }, (_, i) => redeem(i % 2 ? a! : b!, limited.code));
    const results = await Promise.all([...stacks, ...singles]);
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const okStacks = results.slice(0, 12).filter((r) => r.body.ok).length;
    const used = results.filter((r) => r.body.ok).length;
    expect(okStacks).toBe(12);
    // The gift card's balance as each service's validation sees it: what its row says.
    const row = await voucherRow(gift.id);
    expect(row.gift_balance).toBe(10_000 - 300 * okStacks);
    for (const client of [a!, b!]) {
      const seen = await client.post(`/api/v1/vouchers/${gift.code}/validate`, { order, amount: 1 });
      expect(seen.body).toMatchObject({ valid: true, voucher: { balance: 10_000 - 300 * okStacks } });
    }
    // The limited code: every use left can still be taken, and the next one is refused by the validation first.
    for (let i = used; i < 25; i++) expect((await redeem(i % 2 ? a! : b!, limited.code)).body).toMatchObject({ ok: true });
    for (const client of [a!, b!]) {
      expect((await client.post(`/api/v1/vouchers/${limited.code}/validate`, { order })).body).toMatchObject({ valid: false, code: 'redemption_limit_reached' });
    }
    expect((await voucherRow(limited.id)).redeemed_count).toBe(25);
  });
});

describe('a value PostgreSQL refuses', () => {
  it('fails only its own request, not the others committed in the same batch', async () => {
    const v = await voucher({});
    const request = (orderId: string) =>
      service.engine.redeem({ workspaceId, code: v.code, order: { ...order, id: orderId }, customer: { id: null, given: false } });
    // The HTTP layer refuses NUL characters; the engine must still keep one bad value from failing its batch.
    // Two batches start at once with the first two requests; the rest, the bad one among them, form the next batch.
    const ids = [...Array.from({ length: 10 }, (_, i) => `good-${i}`), 'bad\u0000id', ...Array.from({ length: 20 }, (_, i) => `good-${10 + i}`)];
    const results = await Promise.allSettled(ids.map(request));
    expect(results[10]!.status).toBe('rejected');
    expect(results.filter((_, i) => i !== 10).every((r) => r.status === 'fulfilled' && r.value.ok)).toBe(true);
    expect(await successfulRedemptions(v.code)).toBe(30);
  });
});

describe('idempotency key retention', () => {
  it('prunes keys older than 7 days and keeps younger ones, whose replays still work', async () => {
    const v = await voucher({});
    const young = randomUUID();
    const first = await redeem(api, v.code, { order, idempotencyKey: young });
    const old = randomUUID();
    await service.pool.query(
      `INSERT INTO idempotency_keys (workspace_id, key, request_hash, response, created_at) VALUES ($1, $2, 'x', '{}', now() - interval '8 days')`,
      [workspaceId, old],
    );
    expect(await pruneExpiredIdempotencyKeys(service.pool)).toBeGreaterThanOrEqual(1);
    const left = await service.pool.query('SELECT key FROM idempotency_keys WHERE key = ANY($1)', [[young, old]]);
    expect(left.rows.map((r) => r.key)).toEqual([young]);
    expect((await redeem(api, v.code, { order, idempotencyKey: young })).body).toEqual({ ...first.body, idempotent: true });
  });
});
