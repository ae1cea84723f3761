// Three real web processes on one database, each leasing its share of the 64 partition slots: races spread over all
// three stay exact (one owner decides each code, the others forward), stacks span owners atomically, and an owner
// killed with -9 under load (redemptions and stacks forwarded to it in flight) loses its slots to the others within
// the lease time, with no acknowledged write lost, no stack stored in part, no limit exceeded, and its token refused
// by the database afterwards.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { CommitStatements } from '../../src/engine/partition/batch-commit.sql.js';
import { partitionOf } from '../../src/engine/partition-router.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { postJson, spawnWebProcess, type ServiceProcess } from '../support/processes.js';
import { until } from '../support/until.js';

const statements = new CommitStatements();

const LEASE_MS = 2_000;
const SLOTS = 64;
let db: TestDatabase;
const services: ServiceProcess[] = [];
const members: string[] = [];
const bootstrap = generateApiKey();
const order = { amount: 1000, currency: 'EUR' };

interface Lease {
  slot: number;
  owner: string | null;
  token: number;
  live: boolean;
}
const leases = async (): Promise<Lease[]> =>
  (await db.pool.query<Lease>('SELECT slot, owner, token::int AS token, expires_at > now() AS live FROM partition_leases ORDER BY slot')).rows;

beforeAll(async () => {
  db = await createTestDatabase();
  for (let i = 0; i < 3; i++) {
    services.push(await spawnWebProcess(db.url, bootstrap.key, { PARTITIONS: '2', PARTITION_LEASE_MS: String(LEASE_MS) }));
  }
  await Promise.all(services.map((s) => s.waitForReady()));
  for (const s of services) {
    const ready = (await (await fetch(`${s.baseUrl}/ready`)).json()) as { checks: { partitions: { leases: { member: string } } } };
    members.push(ready.checks.partitions.leases.member);
  }
  // Balanced: every slot held and live, by the three members, 21 or 22 each.
  await until(async () => {
    const rows = await leases();
    const counts = members.map((m) => rows.filter((l) => l.owner === m && l.live).length);
    return counts.every((n) => n >= 21) && counts.reduce((a, b) => a + b, 0) === SLOTS ? counts : undefined;
  }, 20_000, 'three members holding all 64 slots');
}, 120_000);
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop('SIGKILL').catch(() => undefined)));
  await db?.drop();
});

const post = (i: number, path: string, body: unknown) => postJson(services[i]!, bootstrap.key, path, body);
/** What the members logged (warnings and errors), shown when a request was not answered 200: the cause is there. */
const membersOutput = () => services.map((s, i) => `--- member ${i}:\n${s.output().slice(-8_000)}`).join('\n');

let workspaceId: string;
/** A new code whose slot is held by `member` (codes are tried until one hashes there). */
async function codeOwnedBy(member: string, prefix: string): Promise<{ code: string; slot: number }> {
  workspaceId ??= (await db.pool.query<{ workspace_id: string }>('SELECT workspace_id FROM api_keys LIMIT 1')).rows[0]!.workspace_id;
  const rows = await leases();
  for (;;) {
    const code = `${prefix}-${randomUUID().slice(0, 8)}`;
    const slot = partitionOf(workspaceId, code, SLOTS);
    if (rows[slot]!.owner === member) return { code, slot };
  }
}

const counts = async (codes: string[]) =>
  (
    await db.pool.query<{ code: string; redeemed_count: number; gift_balance: number | null; rows: number; ledger: number }>(
      `SELECT v.code, v.redeemed_count, v.gift_balance,
              (SELECT count(*)::int FROM redemptions r WHERE r.voucher_id = v.id) AS rows,
              (SELECT coalesce(sum(amount), 0)::int FROM gift_ledger_entries g WHERE g.voucher_id = v.id) AS ledger
         FROM vouchers v WHERE v.code = ANY($1) ORDER BY v.code`,
      [codes],
    )
  ).rows;

describe('partition leases across three web processes', () => {
  it('keeps a limit of 50 under 400 racing redemptions and a gift card exact, requests spread over all three', async () => {
    const limited = (await codeOwnedBy(members[0]!, 'LEASE')).code;
    const gift = (await codeOwnedBy(members[1]!, 'LEASEG')).code;
    expect((await post(2, '/vouchers', { code: limited, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 100 }, redemptionLimit: 50 })).status).toBe(201);
    expect((await post(2, '/vouchers', { code: gift, type: 'GIFT_CARD', gift: { amount: 10_000, currency: 'EUR' } })).status).toBe(201);
    const [limitedResults, giftResults] = await Promise.all([
      Promise.all(Array.from({ length: 400 }, (_, i) => post(i % 3, `/vouchers/${limited}/redemption`, { order }))),
      Promise.all(Array.from({ length: 300 }, (_, i) => post(i % 3, `/vouchers/${gift}/redemption`, { amount: 100 }))),
    ]);
    expect([...limitedResults, ...giftResults].filter((r) => r.status !== 200), membersOutput()).toEqual([]);
    expect(limitedResults.filter((r) => r.body.ok)).toHaveLength(50);
    expect(giftResults.filter((r) => r.body.ok)).toHaveLength(100);
    expect(await counts([limited, gift])).toEqual(
      [
        { code: limited, redeemed_count: 50, gift_balance: null, rows: 50, ledger: 0 },
        { code: gift, redeemed_count: 100, gift_balance: 0, rows: 100, ledger: -10_000 + 10_000 },
      ].sort((a, b) => a.code.localeCompare(b.code)),
    );
    // Only the owner decided: the other two processes forwarded, their threads never saw the code.
    for (const i of [1, 2]) {
      const ready = (await (await fetch(`${services[i]!.baseUrl}/ready`)).json()) as { checks: { partitions: { partitions: Array<{ batches: number }> } } };
      expect(ready.checks.partitions.partitions.length).toBe(2);
    }
  });

  it('redeems stacks whose vouchers have three different owners atomically, never past a limit', async () => {
    const codes = await Promise.all(members.map(async (m, i) => (await codeOwnedBy(m, `SPAN${i}`)).code));
    for (const code of codes) {
      expect((await post(0, '/vouchers', { code, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 100 }, redemptionLimit: 20 })).status).toBe(201);
    }
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post(i % 3, '/redemptions/stack', { vouchers: codes.map((code) => ({ code })), order: { amount: 10_000, currency: 'EUR' }, idempotencyKey: randomUUID() }),
      ),
    );
    expect(results.filter((r) => r.status !== 200), membersOutput()).toEqual([]);
    expect(results.filter((r) => r.body.ok)).toHaveLength(20);
    for (const row of await counts(codes)) expect(row).toMatchObject({ redeemed_count: 20, rows: 20 });
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM redemptions WHERE voucher_code = ANY($1) GROUP BY stack_id',
      [codes],
    );
    expect(rows.every((r) => r.n === 3)).toBe(true);
  });

  it('sends a stack whose vouchers one thread of one member owns to that thread, from every member: commits there, never past a limit', async () => {
    // Three codes of one member whose slots its one thread serves (2 threads: slot mod 2 alike).
    const owner = members[1]!;
    const first = await codeOwnedBy(owner, 'ONE');
    const codes = [first.code];
    while (codes.length < 3) {
      const next = await codeOwnedBy(owner, 'ONE');
      if (next.slot % 2 === first.slot % 2 && next.slot !== first.slot) codes.push(next.code);
    }
    const campaign = await post(0, '/campaigns', { name: `one thread ${randomUUID()}`, type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 } } });
    expect(campaign.status).toBe(201);
    for (const code of codes) {
      const made = await post(0, '/vouchers', { code, campaignId: campaign.body.id, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, redemptionLimit: 40 });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post(i % 3, '/redemptions/stack', { vouchers: codes.map((code) => ({ code })), order: { amount: 10_000, currency: 'EUR' }, idempotencyKey: randomUUID() }),
      ),
    );
    expect(results.filter((r) => r.status !== 200), membersOutput()).toEqual([]);
    // A limit of 40: the 20 sent to the owner cannot take them all, so some of the others' stacks commit too.
    expect(results.filter((r) => r.body.ok)).toHaveLength(40);
    for (const row of await counts(codes)) expect(row).toMatchObject({ redeemed_count: 40, rows: 40 });
    // Every stack committed in the owner's partition thread (writer slot mod 2), none by a stack committer (writer -1).
    const writers = await db.pool.query<{ writer: number; redemptions: number }>(
      'SELECT writer, sum(redemptions)::int AS redemptions FROM redemption_rollups WHERE campaign_id = $1 GROUP BY writer',
      [campaign.body.id],
    );
    expect(writers.rows).toEqual([{ writer: first.slot % 2, redemptions: 120 }]);
  });

  it('moves a killed owner’s slots within the lease time, loses no acknowledged write or stack, and refuses its token', async () => {
    const victim = 2;
    const { code, slot } = await codeOwnedBy(members[victim]!, 'KILL');
    expect((await post(0, '/vouchers', { code, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 100 }, redemptionLimit: 300 })).status).toBe(201);
    // Three more codes of the victim that one of its threads serves: stacks of them are forwarded to it whole.
    const first = await codeOwnedBy(members[victim]!, 'KILLSTACK');
    const stackCodes = [first.code];
    while (stackCodes.length < 3) {
      const next = await codeOwnedBy(members[victim]!, 'KILLSTACK');
      if (next.slot % 2 === first.slot % 2 && next.slot !== first.slot) stackCodes.push(next.code);
    }
    for (const c of stackCodes) {
      expect((await post(0, '/vouchers', { code: c, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 100 }, redemptionLimit: 60 })).status).toBe(201);
    }
    const before = (await leases())[slot]!;
    expect(before.owner).toBe(members[victim]);

    const acknowledged: string[] = [];
    const stacksAcknowledged: string[] = [];
    const answers: number[] = [];
    let sent = 0;
    let killedAt = 0;
    // Bounded load: 400 requests, 8 at a time, sent to the two survivors (they forward to the victim until it dies):
    // redemptions of the one code, every fourth a stack of the other three.
    const worker = async (w: number) => {
      while (sent < 400) {
        const n = sent++;
        if (n === 80) {
          services[victim]!.child.kill('SIGKILL');
          killedAt = Date.now();
        }
        if (n % 4 === 3) {
          const r = await post(n % 2, '/redemptions/stack', { vouchers: stackCodes.map((c) => ({ code: c })), order: { amount: 10_000, currency: 'EUR' }, idempotencyKey: `kill-stack-${w}-${n}` });
          answers.push(r.status);
          if (r.status === 200 && r.body.ok) stacksAcknowledged.push(r.body.stackId);
          continue;
        }
        const r = await post(n % 2, `/vouchers/${code}/redemption`, { order, idempotencyKey: `kill-${w}-${n}` });
        answers.push(r.status);
        if (r.status === 200 && r.body.ok) acknowledged.push(r.body.redemption.id);
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
    const moved = await until(async () => {
      const lease = (await leases())[slot]!;
      return killedAt && lease.owner !== members[victim] && lease.owner !== null && lease.live ? { lease, at: Date.now() } : undefined;
    }, LEASE_MS * 3 + 5_000, 'the slot taken by a survivor');
    await load;
    expect([members[0], members[1]]).toContain(moved.lease.owner);
    expect(moved.lease.token).toBeGreaterThan(before.token);
    // Within the lease time plus one renewal tick of the survivors (and this poll's own 100 ms).
    expect(moved.at - killedAt).toBeLessThan(LEASE_MS + LEASE_MS / 3 + 1_500);

    // Every answer is a decision or a 503 of a write in flight at the kill; every acknowledged redemption is stored.
    expect(answers.filter((s) => s !== 200 && s !== 503), membersOutput()).toEqual([]);
    const stored = await db.pool.query<{ id: string }>('SELECT id FROM redemptions WHERE voucher_code = $1', [code]);
    const ids = new Set(stored.rows.map((r) => r.id));
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);
    const [row] = await counts([code]);
    expect(row!.redeemed_count).toBe(row!.rows);
    expect(row!.redeemed_count).toBeLessThanOrEqual(300);
    expect(row!.redeemed_count - acknowledged.length).toBeLessThanOrEqual(answers.filter((s) => s === 503).length);
    // Every stack stored is whole (a redemption of each of its three codes), every acknowledged one among them; no
    // code past its limit, its count its rows.
    const stacks = await db.pool.query<{ stack_id: string; n: number }>(
      'SELECT stack_id, count(DISTINCT voucher_code)::int AS n FROM redemptions WHERE voucher_code = ANY($1) GROUP BY stack_id',
      [stackCodes],
    );
    expect(stacks.rows.filter((r) => r.n !== 3 || r.stack_id === null)).toEqual([]);
    const storedStacks = new Set(stacks.rows.map((r) => r.stack_id));
    expect(stacksAcknowledged.length).toBeGreaterThan(0);
    expect(stacksAcknowledged.filter((id) => !storedStacks.has(id))).toEqual([]);
    for (const r of await counts(stackCodes)) {
      expect(r.redeemed_count).toBe(r.rows);
      expect(r.redeemed_count).toBe(storedStacks.size);
      expect(r.redeemed_count).toBeLessThanOrEqual(60);
    }

    // A write fenced with the dead owner's token is refused and changes nothing; with the new owner's, it commits.
    const voucher = (await db.pool.query<{ id: string; config_version: number }>('SELECT id, config_version FROM vouchers WHERE code = $1', [code])).rows[0]!;
    // (A use taken back, so that the voucher's own limit, reached or not by the load, is no reason to refuse.)
    const writes = (token: number) => ({
      keys: [], rollbackIds: [], usage: [], usageLimits: [], redemptions: [], rollbacks: [], ledger: [], events: [], budgets: [], sessions: [],
      deltas: [{ id: voucher.id, uses: -1, balance: 0, points: 0, configVersion: voucher.config_version, campaignVersion: null }],
      fences: [[slot, token]] as Array<[number, number]>,
    });
    expect(await statements.commit(db.pool, writes(before.token))).toEqual({ ok: false, failed: 'fence' });
    expect((await counts([code]))[0]!.redeemed_count).toBe(row!.redeemed_count);
    expect(await statements.commit(db.pool, writes(moved.lease.token))).toMatchObject({ ok: true });
    expect((await counts([code]))[0]!.redeemed_count).toBe(row!.redeemed_count - 1);
  });
});
