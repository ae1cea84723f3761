// Durability: a service process serving redemptions under load is killed with SIGKILL. After a restart, every
// acknowledged redemption is in the database, no limit is exceeded, every ledger sums to its balance, and retrying
// the requests in flight with their idempotency keys never executes one twice.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { baseEnv, freePort, spawnService, type ServiceProcess } from '../support/processes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

interface Attempt {
  code: string;
  key: string;
  body: Record<string, unknown>;
  outcome?: { ok: boolean; redemption?: { id: string } };
}

describe('a SIGKILL under load', () => {
  it('loses no acknowledged redemption and executes no retried one twice', async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const bootstrap = generateApiKey();
    const port = await freePort();
    const env = baseEnv({ DATABASE_URL: db.url, PORT: String(port), WORKER_HEALTH_PORT: String(await freePort()), BOOTSTRAP_API_KEY: bootstrap.key, START_WORKER: 'false', LOG_LEVEL: 'warn' });
    let service: ServiceProcess = spawnService(env, port);
    cleanups.push(() => service.stop('SIGKILL'));
    await service.waitForReady();
    const headers = { authorization: `Bearer ${bootstrap.key}`, 'content-type': 'application/json' };
    const post = (path: string, body: unknown) => fetch(`${service.baseUrl}/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) });

    const limited = `CRASH-${randomUUID().slice(0, 8)}`;
    const gift = `GIFT-${randomUUID().slice(0, 8)}`;
    expect((await post('/vouchers', { code: limited, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', redemptionLimit: 150 })).status).toBe(201);
    expect((await post('/vouchers', { code: gift, type: 'GIFT_CARD', gift: { amount: 50_000, currency: 'EUR' } })).status).toBe(201);

    const attempts: Attempt[] = [];
    let killed = false;
    const worker = async (n: number) => {
      for (let i = 0; !killed && i < 400; i++) {
        const code = (n + i) % 2 ? limited : gift;
        const attempt: Attempt = { code, key: randomUUID(), body: code === gift ? { amount: 100 } : { order: { amount: 1000, currency: 'EUR' } } };
        attempts.push(attempt);
        try {
          const res = await post(`/vouchers/${code}/redemption`, { ...attempt.body, idempotencyKey: attempt.key });
          if (res.status === 200) attempt.outcome = (await res.json()) as Attempt['outcome'];
        } catch {
          return; // the connection died with the process: this attempt is in flight
        }
      }
    };
    const load = Promise.all(Array.from({ length: 24 }, (_, n) => worker(n)));
    await new Promise((r) => setTimeout(r, 1_500));
    killed = true;
    service.child.kill('SIGKILL');
    await load;
    const acknowledged = attempts.filter((a) => a.outcome?.ok);
    expect(acknowledged.length).toBeGreaterThan(20);

    service = spawnService(env, port);
    await service.waitForReady();

    // Every acknowledged redemption survived.
    const ids = acknowledged.map((a) => a.outcome!.redemption!.id);
    const stored = await db.pool.query('SELECT count(*)::int AS n FROM redemptions WHERE id = ANY($1)', [ids]);
    expect(stored.rows[0].n).toBe(ids.length);

    // Retrying every attempt (acknowledged or in flight) with its key: replays, or a first execution for those that
    // never committed; never a second one.
    // Eight at a time (each attempt has a key of its own; the keys' order does not matter).
    const retry = async (attempt: Attempt) => {
      const res = await post(`/vouchers/${attempt.code}/redemption`, { ...attempt.body, idempotencyKey: attempt.key });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { ok: boolean; idempotent?: boolean; redemption?: { id: string } };
      if (attempt.outcome) {
        expect(body.idempotent).toBe(true);
        expect(body.redemption?.id).toBe(attempt.outcome.redemption?.id);
      }
    };
    const queue = [...attempts];
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let a = queue.shift(); a; a = queue.shift()) await retry(a);
    }));
    const perKey = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM idempotency_keys k JOIN redemptions r ON r.id::text = k.response->'redemption'->>'id' GROUP BY k.key HAVING count(*) > 1`,
    );
    expect(perKey.rowCount).toBe(0);
    const counts = await db.pool.query<{ code: string; redeemed_count: number; gift_balance: number | null; rows: number; ledger: number | null }>(
      `SELECT v.code, v.redeemed_count, v.gift_balance,
              (SELECT count(*)::int FROM redemptions r WHERE r.voucher_id = v.id AND r.status = 'SUCCEEDED') AS rows,
              (SELECT sum(amount)::int8 FROM gift_ledger_entries g WHERE g.voucher_id = v.id) AS ledger
         FROM vouchers v WHERE v.code = ANY($1)`,
      [[limited, gift]],
    );
    const limitedRow = counts.rows.find((r) => r.code === limited)!;
    const giftRow = counts.rows.find((r) => r.code === gift)!;
    expect(limitedRow.redeemed_count).toBe(limitedRow.rows);
    expect(limitedRow.redeemed_count).toBeLessThanOrEqual(150);
    expect(giftRow.redeemed_count).toBe(giftRow.rows);
    expect(giftRow.ledger).toBe(giftRow.gift_balance);
    expect(giftRow.gift_balance).toBe(50_000 - 100 * giftRow.rows);
    await service.stop('SIGINT');
  }, 120_000);
});
