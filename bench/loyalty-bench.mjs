// The loyalty worker's earning throughput: order.paid events reacted to per second with 10 ORDER_PAID rules.
// `npm run bench` calls earningThroughput() on its own service; `node bench/loyalty-bench.mjs` starts one (embedded
// PostgreSQL in a temp dir) and runs only this row. Bounded: BENCH_EARNING_ORDERS orders (400, at most 5,000), 120 s
// of draining, BENCH_TIMEOUT_S (300) in all; everything on 127.0.0.1, nothing here imports src/.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort, runBounded, serviceEnv, startProcess, startServiceProcess } from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RULES = 10;
const DRAIN_LIMIT_MS = 120_000;

async function inGroupsOf(size, n, each) {
  for (let i = 0; i < n; i += size) await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, k) => each(i + k)));
}

/**
 * A program with 10 ORDER_PAID rules; `orders` orders of as many customers, all paid through the API while no worker
 * runs, so their order.paid events wait in the loyalty inbox. Then one worker process starts, and the clock runs from
 * its spawn until every order has earned under every rule (the backlog drained: events per second as the worker
 * reacts to them, not as fast as the API takes PATCHes). The spread of the earnings' own timestamps is reported too.
 */
export async function earningThroughput({ api, databaseUrl, cleanups, orders = 400 }) {
  const program = await api('POST', '/campaigns', { name: `earning bench ${randomBytes(3).toString('hex')}`, type: 'LOYALTY_PROGRAM', loyalty: {} });
  for (let i = 0; i < RULES; i++) {
    await api('POST', `/loyalty/programs/${program.id}/earning-rules`, { name: `rule ${i}`, trigger: 'ORDER_PAID', points: { type: 'PER_AMOUNT', every: 100, points: 1 } });
  }
  console.error(`earning: ${orders} orders paid while no worker runs, ${RULES} rules ...`);
  const ids = [];
  await inGroupsOf(20, orders, async (i) => {
    ids[i] = (await api('POST', '/orders', { amount: 10_000, currency: 'EUR', customer: { sourceId: `earner-${program.id}-${i}` } })).id;
  });
  await inGroupsOf(20, orders, (i) => api('PATCH', `/orders/${ids[i]}`, { status: 'PAID' }));

  const db = new pg.Client({ connectionString: databaseUrl });
  db.on('error', () => undefined);
  await db.connect();
  const earned = async () =>
    (await db.query('SELECT count(*)::int AS n FROM loyalty_earnings e JOIN loyalty_earning_rules r ON r.id = e.earning_rule_id WHERE r.program_id = $1', [program.id])).rows[0].n;
  try {
    if ((await earned()) !== 0) throw new Error('earnings before the worker started: is another worker running on this database?');
    const healthPort = await freePort();
    const started = performance.now();
    const workerEnv = { ...process.env, DATABASE_URL: databaseUrl, WORKER_HEALTH_PORT: String(healthPort), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    await startProcess(root, 'dist/workers/background.js', workerEnv, `http://127.0.0.1:${healthPort}/health`, cleanups);
    const healthyAfter = (performance.now() - started) / 1000;
    let n = 0;
    while ((n = await earned()) < orders * RULES && performance.now() - started < DRAIN_LIMIT_MS) await new Promise((r) => setTimeout(r, 50));
    const seconds = (performance.now() - started) / 1000;
    const spread = (
      await db.query(
        `SELECT extract(epoch FROM max(e.created_at) - min(e.created_at))::float8 AS s FROM loyalty_earnings e
           JOIN loyalty_earning_rules r ON r.id = e.earning_rule_id WHERE r.program_id = $1`,
        [program.id],
      )
    ).rows[0].s;
    const row = {
      orders,
      rules: RULES,
      earnings: n,
      seconds,
      eventsPerSecond: Math.round(orders / seconds),
      earningsPerSecond: Math.round(n / seconds),
      drainEventsPerSecond: spread > 0 ? Math.round(orders / spread) : null,
    };
    console.log(
      `\nloyalty earning (worker): ${orders} order.paid events waiting, ${RULES} ORDER_PAID rules → ${n.toLocaleString('en')} earnings ` +
        `in ${seconds.toFixed(1)} s from the worker's spawn (healthy after ${healthyAfter.toFixed(1)} s): ${row.eventsPerSecond} events/s, ` +
        `${row.earningsPerSecond} earnings/s; between the first and the last earning ${spread.toFixed(1)} s (${row.drainEventsPerSecond} events/s)` +
        (n < orders * RULES ? `  MISSED: ${orders * RULES - n} earnings not made within ${DRAIN_LIMIT_MS / 1000} s` : ''),
    );
    return row;
  } finally {
    await db.end();
  }
}

/** Alone: a service of its own (no worker beside it), then the row. */
async function main(cleanups) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'promotions-loyalty-bench-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const alnum = (n) => Array.from(randomBytes(n), (b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[b % 62]).join('');
  const key = `service_${alnum(12)}_${alnum(40)}`;
  const port = await freePort();
  const env = serviceEnv({ dataDir, port, healthPort: await freePort(), key, extra: { WEB_PROCESSES: '1' } });
  console.error(`starting the service (embedded PostgreSQL under ${dataDir}) ...`);
  await startServiceProcess(root, env, cleanups);
  const state = JSON.parse(await readFile(path.join(dataDir, 'embedded-postgres.json'), 'utf8'));
  const databaseUrl = `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/promotions`;
  const api = async (method, p, body) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1${p}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const orders = Math.min(5_000, Math.max(1, Number(process.env.BENCH_EARNING_ORDERS ?? 400)));
  await earningThroughput({ api, databaseUrl, cleanups, orders });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const cleanups = [];
  runBounded(() => main(cleanups), Number(process.env.BENCH_TIMEOUT_S ?? 300) * 1000, cleanups);
}
