// A web process that cannot renew its partition leases stops deciding for its slots: once one lease time has passed
// without the renewal landing (lease-renewal.test.ts: a renewal that lands in that time lets the call go on), its
// calls answer 503 naming the leases, with Retry-After, instead of waiting out the failover time for an owner that is
// itself. The
// renewals are stalled for real: the test holds the lease table locked in a transaction of its own, while the rest of
// the database (API keys, vouchers) answers. (With PostgreSQL wholly unreachable the request is refused earlier, as
// "the database is unreachable": the API-key cache drops what it verified once its change listener is cut.) The 503
// writes nothing, and once the lock goes the process renews and redeems again, with every acknowledged redemption and
// nothing else in the database. A voucher written through the CRUD API meanwhile is answered as written (its
// commit does not need the leases; only telling the partition does, and a lease gained later reloads anyway): a 503
// there would send the client's retry into a 409 for a voucher it was told was not made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { spawnWebProcess, type ServiceProcess } from '../support/processes.js';
import { until } from '../support/until.js';

const LEASE_MS = 2_000;
let db: TestDatabase;
let service: ServiceProcess;
const bootstrap = generateApiKey();
const headers = { authorization: `Bearer ${bootstrap.key}`, 'content-type': 'application/json' };

beforeAll(async () => {
  db = await createTestDatabase();
  service = await spawnWebProcess(db.url, bootstrap.key, { LOG_LEVEL: 'fatal', PARTITIONS: '2', PARTITION_LEASE_MS: String(LEASE_MS) });
  await service.waitForReady();
}, 120_000);
afterAll(async () => {
  await service?.stop('SIGKILL').catch(() => undefined);
  await db?.drop();
});

const redeem = async (code: string) => {
  const res = await fetch(`${service.baseUrl}/api/v1/vouchers/${code}/redemption`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ order: { amount: 1000, currency: 'EUR' } }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
};

describe('a process whose partition leases lapse', () => {
  it('answers 503 naming its leases while it cannot renew them, writes nothing, and redeems again once it can', async () => {
    const created = await fetch(`${service.baseUrl}/api/v1/vouchers`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ code: 'LAPSE', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', redemptionLimit: 10 }),
    });
    expect(created.status).toBe(201);
    expect((await redeem('LAPSE')).status).toBe(200);

    const locker = await db.pool.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE partition_leases IN ACCESS EXCLUSIVE MODE');
    let refused: Awaited<ReturnType<typeof redeem>>;
    try {
      // Past 90 % of the lease since the last renewal: the process may no longer decide for its slots.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
      refused = await redeem('LAPSE');
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.retryAfter).toBe('1');
    expect(refused.body.code).toBe('service_unavailable');
    // The lapsed branch, not the wait for another owner (whose detail says that none answers).
    expect(refused.body.detail).toMatch(/cannot renew its partition leases/);

    await until(async () => (await redeem('LAPSE')).status === 200, 30_000, 'a redemption once the leases are renewed');
    const { rows } = await db.pool.query<{ redeemed_count: number; rows: number }>(
      `SELECT v.redeemed_count, (SELECT count(*)::int FROM redemptions r WHERE r.voucher_id = v.id) AS rows FROM vouchers v WHERE v.code = 'LAPSE'`,
    );
    // The first redemption and the one after the stall; the refused one and any refused while reconnecting, none.
    expect(rows[0]).toEqual({ redeemed_count: 2, rows: 2 });
  }, 90_000);

  it('answers a voucher written while it cannot renew its leases as written, and decides on what was written once it can', async () => {
    const write = (path: string, method: string, body?: unknown) =>
      fetch(`${service.baseUrl}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
    expect((await write('/vouchers', 'POST', { code: 'KEPT', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' })).status).toBe(201);
    // Known to the partition (cached) before the stall, so that only forgetting it shows the disable. The slots the
    // first case's stall let lapse are taken again one tick at a time: a 503 until then, which a client sends again.
    await until(async () => (await redeem('KEPT')).status === 200, 30_000, 'KEPT redeemed before the stall');
    const unknown = await until(async () => {
      const answer = await redeem('BORN-LAPSED');
      return answer.status === 200 && answer;
    }, 30_000, 'BORN-LAPSED decided before the stall');
    expect(unknown.body).toMatchObject({ ok: false });

    const locker = await db.pool.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE partition_leases IN ACCESS EXCLUSIVE MODE');
    let created: Response;
    let disabled: Response;
    try {
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
      expect((await redeem('KEPT')).body.detail).toMatch(/cannot renew its partition leases/);
      created = await write('/vouchers', 'POST', { code: 'BORN-LAPSED', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
      disabled = await write('/vouchers/KEPT/disable', 'POST');
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }
    expect(created.status, await created.clone().text()).toBe(201);
    expect(disabled.status, await disabled.clone().text()).toBe(200);
    // The client's retry of the create is told the truth: it exists.
    expect((await write('/vouchers', 'POST', { code: 'BORN-LAPSED', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' })).status).toBe(409);

    // After the stall too the slots come back one tick at a time (a 503 until then): each is asked until it decides.
    const decided = (code: string) =>
      until(async () => {
        const answer = await redeem(code);
        return answer.status === 200 && answer;
      }, 30_000, `${code} decided once the leases are renewed`);
    expect((await decided('BORN-LAPSED')).body).toMatchObject({ ok: true });
    const refused = await decided('KEPT');
    expect(refused.body, JSON.stringify(refused.body)).toMatchObject({ ok: false });
    expect(JSON.stringify(refused.body)).toMatch(/disabled|inactive|not active/i);
  }, 90_000);
});
