// Two real service processes writing at once on one database (each with partitions 0 and 1, so both write the same
// rollup rows): the insight figures equal what the redemptions and rollbacks tables hold, to the unit. Then a clean
// stop writes the refusals counted in memory, and a process started with INSIGHTS_ROLLUP=false adds nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { partitionOf } from '../../src/engine/partition-router.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { baseEnv, freePort, spawnService, type ServiceProcess } from '../support/processes.js';

let db: TestDatabase;
const services: ServiceProcess[] = [];
const bootstrap = generateApiKey();
const headers = { authorization: `Bearer ${bootstrap.key}`, 'content-type': 'application/json' };

async function start(extra: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const env = baseEnv({ DATABASE_URL: db.url, PORT: String(port), WORKER_HEALTH_PORT: String(await freePort()), BOOTSTRAP_API_KEY: bootstrap.key, START_WORKER: 'false', LOG_LEVEL: 'warn', PARTITIONS: '2', ...extra });
  const service = spawnService(env, port);
  services.push(service);
  await service.waitForReady();
  return service;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await start();
  await start();
}, 120_000);
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop('SIGKILL').catch(() => undefined)));
  await db?.drop();
});

const call = async (service: ServiceProcess, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${service.baseUrl}/api/v1${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, body: (await res.json()) as any };
};
const post = (i: number, path: string, body: unknown) => call(services[i % 2]!, 'POST', path, body);

interface Totals {
  redemptions: number;
  rollbacks: number;
  discountAmount: number;
  giftAmount: number;
  rolledBackAmount: number;
}

/** The insight periods summed per currency. */
function totalsOf(data: Array<Totals & { currency: string | null }>): Record<string, Totals> {
  const totals: Record<string, Totals> = {};
  for (const p of data) {
    const t = (totals[p.currency ?? ''] ??= { redemptions: 0, rollbacks: 0, discountAmount: 0, giftAmount: 0, rolledBackAmount: 0 });
    t.redemptions += p.redemptions;
    t.rollbacks += p.rollbacks;
    t.discountAmount += p.discountAmount;
    t.giftAmount += p.giftAmount;
    t.rolledBackAmount += p.rolledBackAmount;
  }
  return totals;
}

/** The same figures counted from the redemptions and rollbacks themselves (what the insights never read). */
async function truth(campaignId?: string): Promise<Record<string, Totals>> {
  const { rows } = await db.pool.query<{ currency: string; redemptions: number; discount: number; gift: number; rollbacks: number; rolled_back: number }>(
    `WITH red AS (
       SELECT coalesce(currency, '') AS currency, count(*) AS n,
              sum(amount) FILTER (WHERE kind = 'DISCOUNT') AS discount, sum(amount) FILTER (WHERE kind = 'GIFT') AS gift
         FROM redemptions WHERE $1::uuid IS NULL OR campaign_id = $1 GROUP BY 1
     ), rb AS (
       SELECT coalesce(x.currency, '') AS currency, count(*) AS n, sum(b.amount) AS amount
         FROM redemption_rollbacks b JOIN redemptions x ON x.id = b.redemption_id
        WHERE $1::uuid IS NULL OR x.campaign_id = $1 GROUP BY 1
     )
     SELECT red.currency, red.n::int8 AS redemptions, coalesce(red.discount, 0)::int8 AS discount, coalesce(red.gift, 0)::int8 AS gift,
            coalesce(rb.n, 0)::int8 AS rollbacks, coalesce(rb.amount, 0)::int8 AS rolled_back
       FROM red LEFT JOIN rb USING (currency)`,
    [campaignId ?? null],
  );
  return Object.fromEntries(
    rows.map((r) => [r.currency, { redemptions: r.redemptions, rollbacks: r.rollbacks, discountAmount: r.discount, giftAmount: r.gift, rolledBackAmount: r.rolled_back }]),
  );
}

describe('insights with two service processes on one database', () => {
  it('counts every redemption, stack member and rollback exactly while both processes write the same rollup rows', async () => {
    const campaign = (await post(0, '/campaigns', { name: 'Flash sale', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 300 } } })).body;
    const { codes } = (await post(0, `/campaigns/${campaign.id}/vouchers/generate`, { count: 40 })).body as { codes: string[] };
    const gift = `TWO-GIFT-${randomUUID().slice(0, 8)}`;
    expect((await post(1, '/vouchers', { code: gift, type: 'GIFT_CARD', gift: { amount: 1_000_000, currency: 'USD' } })).status).toBe(201);
    const giftEur = `TWO-GIFTE-${randomUUID().slice(0, 8)}`;
    expect((await post(0, '/vouchers', { code: giftEur, type: 'GIFT_CARD', gift: { amount: 1_000_000, currency: 'EUR' } })).status).toBe(201);
    const loose = `TWO-LOOSE-${randomUUID().slice(0, 8)}`;
    expect((await post(1, '/vouchers', { code: loose, type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } })).status).toBe(201);

    const order = { amount: 2_000, currency: 'EUR' };
    const results = await Promise.all([
      ...Array.from({ length: 240 }, (_, i) => post(i, `/vouchers/${codes[i % codes.length]}/redemption`, { order })),
      ...Array.from({ length: 60 }, (_, i) => post(i, `/vouchers/${gift}/redemption`, { amount: 100 + i })),
      ...Array.from({ length: 30 }, (_, i) => post(i, `/vouchers/${loose}/redemption`, { order: { amount: 1_000 + i * 10, currency: 'EUR' } })),
      ...Array.from({ length: 20 }, (_, i) =>
        post(i, '/redemptions/stack', { vouchers: [{ code: codes[i]! }, { code: giftEur, amount: 50 }], order, idempotencyKey: randomUUID() }),
      ),
    ]);
    expect(results.every((r) => r.status === 200 && r.body.ok)).toBe(true);

    // Roll back 45 of them through both processes, racing; a second rollback of one of them is refused.
    const ids = results.slice(0, 300).filter((_, i) => i % 7 === 0).map((r) => r.body.redemption.id as string).slice(0, 45);
    const rollbacks = await Promise.all(ids.map((id, i) => post(i + 1, `/redemptions/${id}/rollback`, { reason: 'test' })));
    expect(rollbacks.every((r) => r.body.ok)).toBe(true);
    expect((await post(0, `/redemptions/${ids[0]}/rollback`, {})).body.code).toBe('redemption_already_rolled_back');

    const byDay = await call(services[0]!, 'GET', '/insights/redemptions?interval=day');
    expect(byDay.status).toBe(200);
    const expected = await truth();
    expect(expected.EUR!.redemptions).toBe(240 + 30 + 2 * 20);
    expect(expected.USD!.redemptions).toBe(60);
    expect(totalsOf(byDay.body.data)).toEqual(expected);
    // Hours add up to the same, and a campaign's figures are its own.
    const byHour = await call(services[1]!, 'GET', '/insights/redemptions?interval=hour');
    expect(totalsOf(byHour.body.data)).toEqual(expected);
    const ofCampaign = await call(services[1]!, 'GET', `/insights/redemptions?campaignId=${campaign.id}`);
    expect(totalsOf(ofCampaign.body.data)).toEqual(await truth(campaign.id));
    expect(totalsOf(ofCampaign.body.data).EUR!.redemptions).toBe(260);

    const top = await call(services[0]!, 'GET', '/insights/campaigns?limit=5');
    expect(top.body.data[0]).toMatchObject({ campaignId: campaign.id, name: 'Flash sale', currency: 'EUR', redemptions: 260, discountAmount: 260 * 300 });
    // Both processes wrote rollup rows of partition 0 and 1 (and -1, the stack committers); one row per writer and hour.
    const { rows } = await db.pool.query(`SELECT DISTINCT writer FROM redemption_rollups ORDER BY writer`);
    expect(rows.map((r) => r.writer)).toEqual([-1, 0, 1]);
  }, 120_000);

  it('writes the refusals counted in memory when a process stops cleanly', async () => {
    // A code is decided (and its refusals counted) by the process that leases its slot: one of the first service's.
    const ready = (await (await fetch(`${services[0]!.baseUrl}/ready`)).json()) as { checks: { partitions: { leases: { owned: number[] } } } };
    const owned = new Set(ready.checks.partitions.leases.owned);
    const { rows: keys } = await db.pool.query<{ workspace_id: string }>('SELECT workspace_id FROM api_keys LIMIT 1');
    let missing = '';
    do missing = `NOPE-${randomUUID().slice(0, 8)}`;
    while (!owned.has(partitionOf(keys[0]!.workspace_id, missing, 64)));
    for (let i = 0; i < 7; i++) expect((await post(0, `/vouchers/${missing}/redemption`, { order: { amount: 100, currency: 'EUR' } })).body.code).toBe('voucher_not_found');
    await services[0]!.stop('SIGINT');
    const { rows } = await db.pool.query(`SELECT sum(count)::int8 AS n FROM refusal_counts WHERE code = 'voucher_not_found' AND source = 'redemption'`);
    expect(rows[0].n).toBe(7);
  }, 60_000);

  it('loses at most the refusals of the last flush interval (2 s) when a process is killed', async () => {
    const killed = services[1]!;
    const code = `GONE-${randomUUID().slice(0, 8)}`;
    const answeredAt: number[] = [];
    const until = Date.now() + 4_500;
    while (Date.now() < until) {
      const res = await call(killed, 'POST', `/vouchers/${code}/validate`, { order: { amount: 100, currency: 'EUR' } });
      expect(res.body.code).toBe('voucher_not_found');
      answeredAt.push(Date.now());
    }
    const killedAt = Date.now();
    await killed.stop('SIGKILL');
    const { rows } = await db.pool.query(`SELECT coalesce(sum(count), 0)::int8 AS n FROM refusal_counts WHERE code = 'voucher_not_found' AND source = 'validation'`);
    const counted = rows[0].n as number;
    const olderThanAFlush = answeredAt.filter((t) => t < killedAt - 2_000 - 500).length;
    const lostSince = counted < answeredAt.length ? killedAt - answeredAt[counted]! : 0;
    console.info(`kill -9: ${answeredAt.length - counted} of ${answeredAt.length} refusals answered in 4.5 s were lost (those of the last ${lostSince} ms)`);
    expect(counted).toBeGreaterThanOrEqual(olderThanAFlush);
    expect(counted).toBeLessThanOrEqual(answeredAt.length);
  }, 60_000);

  it('adds nothing to the rollup from a process started with INSIGHTS_ROLLUP=false', async () => {
    const off = await start({ INSIGHTS_ROLLUP: 'false' });
    const before = await truth();
    const code = `OFF-${randomUUID().slice(0, 8)}`;
    expect((await call(off, 'POST', '/vouchers', { code, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' })).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await call(off, 'POST', `/vouchers/${code}/redemption`, { order: { amount: 1_000, currency: 'EUR' } })).body.ok).toBe(true);
    const after = await call(off, 'GET', '/insights/redemptions');
    expect(totalsOf(after.body.data)).toEqual(before);
    expect((await truth()).EUR!.redemptions).toBe(before.EUR!.redemptions + 5);
  }, 120_000);
});
