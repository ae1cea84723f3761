// The points sweep keeps time while the service is busy: with LOYALTY_JOBS_INTERVAL=1s and redemptions running, 200
// buckets due over 10 s each expire at most an interval plus one sweep after their expiresAt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { baseEnv, freePort, spawnService, type ServiceProcess } from '../support/processes.js';

const INTERVAL_MS = 1_000;
const BUCKETS = 200;
const SPREAD_MS = 10_000;

let db: TestDatabase;
let service: ServiceProcess;
const admin = generateApiKey();
const headers = { authorization: `Bearer ${admin.key}`, 'content-type': 'application/json' };
beforeAll(async () => {
  db = await createTestDatabase();
  const [port, workerPort] = [await freePort(), await freePort()];
  service = spawnService(
    baseEnv({ DATABASE_URL: db.url, PORT: String(port), WORKER_HEALTH_PORT: String(workerPort), BOOTSTRAP_API_KEY: admin.key, LOYALTY_JOBS_INTERVAL: '1s' }),
    port,
  );
  await service.waitForReady(90_000);
}, 120_000);
afterAll(async () => {
  await service?.stop('SIGKILL').catch(() => undefined);
  await db?.drop();
});

async function post(path: string, body: unknown): Promise<any> {
  const res = await fetch(`${service.baseUrl}/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const answer = await res.json();
  if (res.status >= 300) throw new Error(`${path} ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** The longest sweep the worker logged, in ms. */
function longestSweepMs(output: string): number {
  const durations = [...output.matchAll(/"sweepMs":(\d+)/g)].map((m) => Number(m[1]));
  return Math.max(0, ...durations);
}

describe('the points sweep under load', () => {
  it('expires each of 200 buckets due over 10 s at most an interval plus one sweep late while redemptions run', async () => {
    const program = await post('/campaigns', { name: 'Club', type: 'LOYALTY_PROGRAM', loyalty: {} });
    await post('/vouchers', { code: 'BUSY-1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 }, redemptionLimit: 1_000_000 });
    const members: string[] = [];
    for (let i = 0; i < 20; i++) {
      const customer = await post('/customers', { sourceId: `sweep-${i}` });
      members.push((await post(`/loyalty/programs/${program.id}/members`, { customer: { id: customer.id } })).id);
    }
    // Due from 8 s from now, one every 50 ms, spread over the members (made 20 at a time, a member each).
    const firstDue = Date.now() + 8_000;
    for (let from = 0; from < BUCKETS; from += members.length) {
      await Promise.all(
        members.map((memberId, m) => post(`/loyalty/members/${memberId}/points`, { points: 10, expiresAt: new Date(firstDue + ((from + m) * SPREAD_MS) / BUCKETS).toISOString() })),
      );
    }
    expect(Date.now(), 'the buckets were made before the first is due').toBeLessThan(firstDue);

    // Redemptions, 8 at a time, until the last bucket is due and a little after (bounded: 40,000 requests).
    let sent = 0;
    const stopAt = firstDue + SPREAD_MS + 3_000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < stopAt && sent < 40_000) {
          sent++;
          const res = await fetch(`${service.baseUrl}/api/v1/vouchers/BUSY-1/redemption`, { method: 'POST', headers, body: JSON.stringify({ order: { amount: 1_000, currency: 'EUR' } }) });
          await res.arrayBuffer();
        }
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_MS));

    const { rows } = await db.pool.query<{ late_ms: number | null }>(
      `SELECT (extract(epoch FROM e.created_at - b.expires_at) * 1000)::int AS late_ms
         FROM loyalty_point_buckets b LEFT JOIN loyalty_ledger_entries e ON e.bucket_id = b.id AND e.type = 'POINTS_EXPIRED'
        WHERE b.expires_at IS NOT NULL`,
    );
    expect(rows).toHaveLength(BUCKETS);
    expect(rows.filter((r) => r.late_ms === null), 'every bucket expired').toEqual([]);
    const latest = Math.max(...rows.map((r) => r.late_ms!));
    const sweep = longestSweepMs(service.output());
    expect(sweep, 'the worker logged its sweeps').toBeGreaterThan(0);
    expect(sent, 'redemptions ran throughout').toBeGreaterThan(500);
    expect(latest, `latest expiry ${latest} ms late; longest sweep ${sweep} ms; ${sent} redemptions`).toBeLessThanOrEqual(INTERVAL_MS + sweep);
  }, 120_000);
});
