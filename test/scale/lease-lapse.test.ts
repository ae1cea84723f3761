// A web process that cannot renew its partition leases stops deciding for its slots at once: its calls answer 503
// naming the leases, with Retry-After, instead of waiting out the failover time for an owner that is itself. The
// renewals are stalled for real: the test holds the lease table locked in a transaction of its own, while the rest of
// the database (API keys, vouchers) answers. (With PostgreSQL wholly unreachable the request is refused earlier, as
// "the database is unreachable": the API-key cache drops what it verified once its change listener is cut.) The 503
// writes nothing, and once the lock goes the process renews and redeems again, with every acknowledged redemption and
// nothing else in the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { spawnWebProcess, type ServiceProcess } from '../support/processes.js';
import { until } from '../webhooks/support.js';

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
});
