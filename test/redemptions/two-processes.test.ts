// Two real web processes on one database, each with its own partitions and caches: the SQL guards keep every limit
// and balance exact while requests alternate between them.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { baseEnv, freePort, postJson, spawnService, type ServiceProcess } from '../support/processes.js';

let db: TestDatabase;
const services: ServiceProcess[] = [];
const bootstrap = generateApiKey();
beforeAll(async () => {
  db = await createTestDatabase();
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const env = baseEnv({ DATABASE_URL: db.url, PORT: String(port), WORKER_HEALTH_PORT: String(await freePort()), BOOTSTRAP_API_KEY: bootstrap.key, START_WORKER: 'false', LOG_LEVEL: 'warn' });
    services.push(spawnService(env, port));
  }
  await Promise.all(services.map((s) => s.waitForReady()));
}, 120_000);
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop('SIGKILL').catch(() => undefined)));
  await db?.drop();
});

const post = (i: number, path: string, body: unknown) => postJson(services[i % 2]!, bootstrap.key, path, body);

describe('two service processes on one database', () => {
  it('never over-redeem a limit or a gift balance', async () => {
    const limited = `TWO-${randomUUID().slice(0, 8)}`;
    const gift = `TWOG-${randomUUID().slice(0, 8)}`;
    expect((await post(0, '/vouchers', { code: limited, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', redemptionLimit: 50 })).status).toBe(201);
    expect((await post(1, '/vouchers', { code: gift, type: 'GIFT_CARD', gift: { amount: 10_000, currency: 'EUR' } })).status).toBe(201);
    // Both processes have the vouchers cached before the race.
    await Promise.all([0, 1].map((i) => post(i, `/vouchers/${limited}/validate`, { order: { amount: 1000, currency: 'EUR' } })));
    const [limitedResults, giftResults] = await Promise.all([
      Promise.all(Array.from({ length: 400 }, (_, i) => post(i, `/vouchers/${limited}/redemption`, { order: { amount: 1000, currency: 'EUR' } }))),
      Promise.all(Array.from({ length: 300 }, (_, i) => post(i, `/vouchers/${gift}/redemption`, { amount: 100 }))),
    ]);
    expect(limitedResults.filter((r) => r.body.ok)).toHaveLength(50);
    expect(giftResults.filter((r) => r.body.ok)).toHaveLength(100);
    const { rows } = await db.pool.query(
      `SELECT v.code, v.redeemed_count, v.gift_balance,
              (SELECT count(*)::int FROM redemptions r WHERE r.voucher_id = v.id) AS rows,
              (SELECT coalesce(sum(amount), 0)::int8 FROM gift_ledger_entries g WHERE g.voucher_id = v.id) AS ledger
         FROM vouchers v WHERE v.code = ANY($1) ORDER BY v.code`,
      [[limited, gift]],
    );
    expect(rows).toEqual([
      { code: limited, redeemed_count: 50, gift_balance: null, rows: 50, ledger: 0 },
      { code: gift, redeemed_count: 100, gift_balance: 0, rows: 100, ledger: 0 },
    ]);
    // A settings change made through one process reaches the other's next decision: its cache still says active,
    // the version guard refuses the write, it reloads and decides again.
    const changed = `TWOC-${randomUUID().slice(0, 8)}`;
    expect((await post(0, '/vouchers', { code: changed, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' })).status).toBe(201);
    expect((await post(1, `/vouchers/${changed}/validate`, { order: { amount: 1000, currency: 'EUR' } })).body.valid).toBe(true);
    expect((await post(0, `/vouchers/${changed}/disable`, {})).status).toBe(200);
    expect((await post(1, `/vouchers/${changed}/redemption`, { order: { amount: 1000, currency: 'EUR' } })).body.code).toBe('voucher_disabled');
  }, 120_000);

  it('creates each new customer once when batches of both processes name it at once, each redemption counted against its own', async () => {
    // Eight vouchers over the two processes' partitions: their batches find or create the same new customers at once.
    const codes = Array.from({ length: 8 }, (_, i) => `TWON-${i}-${randomUUID().slice(0, 8)}`);
    for (const code of codes) expect((await post(0, '/vouchers', { code, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' })).status).toBe(201);
    const tag = randomUUID().slice(0, 8);
    const names = Array.from({ length: 20 }, (_, i) => `racer-${tag}-${i}`);
    const requests = names.flatMap((sourceId) => codes.map((code) => ({ sourceId, code })));
    const answers = await Promise.all(
      requests.map(({ sourceId, code }, i) => post(i, `/vouchers/${code}/redemption`, { order: { amount: 1000, currency: 'EUR' }, customer: { sourceId } })),
    );
    expect(answers.filter((a) => a.body.ok)).toHaveLength(requests.length);
    const customers = await db.pool.query<{ id: string; source_id: string }>('SELECT id, source_id FROM customers WHERE source_id = ANY($1)', [names]);
    expect(customers.rows.map((c) => c.source_id).sort()).toEqual([...names].sort());
    const created = await db.pool.query(`SELECT 1 FROM events WHERE type = 'customer.created' AND payload->>'sourceId' = ANY($1)`, [names]);
    expect(created.rows).toHaveLength(names.length);
    const idOf = new Map(customers.rows.map((c) => [c.source_id, c.id]));
    const owners = await db.pool.query<{ id: string; customer_id: string }>('SELECT id, customer_id FROM redemptions WHERE id = ANY($1::uuid[])', [
      answers.map((a) => a.body.redemption.id),
    ]);
    const ownerOf = new Map(owners.rows.map((r) => [r.id, r.customer_id]));
    answers.forEach((a, i) => expect(ownerOf.get(a.body.redemption.id)).toBe(idOf.get(requests[i]!.sourceId)));
  }, 120_000);
});
