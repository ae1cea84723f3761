// The hot-path benchmark: starts the real service (embedded PostgreSQL in a temp folder), a bare node:http server, an
// express 5 server and a naive express + pg peer on the same PostgreSQL, drives each with autocannon in one run and
// prints one table (req/s, p50, p99, ratios to each reference), then the bulk figures: 1,000,000 codes generated and
// inserted, and the service's RSS with them in the database and a bounded cache. The insights rollup is compared in
// the same run: hot-code and spread redeem on two service processes started for it on the same database, one with the
// rollup and one with INSIGHTS_ROLLUP=false (each process measured on codes whose partition slots it holds itself, so
// nothing is forwarded), in the order on, off, off, on (BENCH_ROLLUP=0 skips); both then stop. Metrics alike:
// validate, hot-code and spread redeem, on against METRICS=off (BENCH_METRICS=0 skips). The CPU table (cpu-table.mjs)
// measures every row in bare node:http's own CPU a request and checks the targets of issue 36; the floor
// (floor-bench.mjs, reference/lean-floor.mjs) runs the validate and redeem rows as the least any service could do
// them and judges whether each target of issue 36 is within reach on this machine.
// Bounded: BENCH_DURATION_S per scenario (default 10), BENCH_CONNECTIONS (50), BENCH_BULK codes (1000000), and a
// hard limit BENCH_TIMEOUT_S (900). Talks to everything over HTTP on 127.0.0.1; nothing here imports src/.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { printCpuTable } from './cpu-table.mjs';
import { compareSetting, printComparison } from './setting-compare.mjs';
import { cpuBetween, freePort, runBounded, serviceEnv, startReference as startSharedReference, startServiceProcess, treeCpu } from './support.mjs';
import { earningThroughput } from './loyalty-bench.mjs';
import { BEST_DEAL_RATE, bestDealRows } from './best-deal-bench.mjs';
import { recordOfferedRate } from './offered-rate.mjs';
import { floorRows, printFloor, startFloor } from './floor-bench.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP = Math.min(3, DURATION);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const BULK = Number(process.env.BENCH_BULK ?? 1_000_000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000;
const ROLLUP_COMPARE = process.env.BENCH_ROLLUP !== '0';
// Rounds of the rollup comparison, each on, off, off, on per scenario (more rounds average out a busy machine).
const ROLLUP_ROUNDS = Number(process.env.BENCH_ROLLUP_ROUNDS ?? 2);
// Metrics on (the default) against METRICS=off, rounds of on, off, off, on per scenario.
const METRICS_COMPARE = process.env.BENCH_METRICS !== '0';
const METRICS_ROUNDS = Number(process.env.BENCH_METRICS_ROUNDS ?? 3);

const cleanups = [];
const alnum = (n) => {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(n), (b) => chars[b % chars.length]).join('');
};

const startReference = (script, args) => startSharedReference(root, script, args, cleanups);

// BENCH_ONLY=spread,stack runs only the scenarios whose names contain one of the words (references always run).
const ONLY = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
const skipped = { rps: 0, p50: 0, p99: 0, non2xx: 0, errors: 0 };
/** What a fixed-rate row's check adds: autocannon's own p99 and the responses of 20 ms or more. */
const atRate = (row) => (row.offered ? `; autocannon's ${row.autocannonP99} ms; ${row.offered.over20ms} of ${row.offered.responses} responses >= 20 ms` : '');

/**
 * One scenario: warm-up, then the measured seconds. With `servicePid`, the CPU each part took meanwhile (from /proc), in
 * µs a request: the service's node threads (`web` its web thread alone), its PostgreSQL, and this load generator.
 */
// A naive-peer row runs with any selection, but its checkout row only with the service's checkout row.
const picked = (name) => !ONLY.length || name.includes('fixed JSON') || (name.startsWith('naive') && !name.includes('checkout')) || ONLY.some((w) => name.includes(w));
const requestsOf = (options) => ({ connections: CONNECTIONS, method: 'POST', ...options, headers: { 'content-type': 'application/json', ...options.headers } });

/** Load for the warm-up time, nothing measured (a scenario's first run must not pay for a cold process alone). */
async function warmUp(name, options) {
  if (picked(name)) await autocannon({ ...requestsOf(options), duration: WARMUP });
}

async function load(name, options, servicePid) {
  if (!picked(name)) return { ...skipped, name };
  const base = requestsOf(options);
  await autocannon({ ...base, duration: WARMUP });
  // `servicePid` may name two trees: { node: its node process, postgres: the process whose PostgreSQL it uses }.
  const trees = typeof servicePid === 'object' ? servicePid : servicePid && { node: servicePid, postgres: servicePid };
  const readCpu = async () => trees && { node: await treeCpu(trees.node), postgres: trees.postgres === trees.node ? undefined : await treeCpu(trees.postgres) };
  const [before, selfBefore] = [await readCpu(), process.cpuUsage()];
  const instance = autocannon({ ...base, duration: DURATION });
  const offered = base.overallRate ? recordOfferedRate(instance, base) : undefined;
  const result = await instance;
  const after = await readCpu();
  const self = process.cpuUsage(selfBefore);
  const taken = after && { ...cpuBetween(before.node, after.node), ...(after.postgres && { postgres: cpuBetween(before.postgres, after.postgres).postgres }) };
  const atOffered = offered?.summary();
  const perRequest = (seconds) => Math.round((seconds * 1e6) / Math.max(1, result.requests.total));
  const row = {
    name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    // At an offered rate, p50 and p99 corrected at the rate's own interval (bench/offered-rate.mjs); autocannon's kept.
    ...(atOffered && { p50: atOffered.p50, p99: atOffered.p99, offered: atOffered, autocannonP99: result.latency.p99 }),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    ...(taken && {
      cpu: {
        service: perRequest(taken.node),
        web: perRequest(taken.webThread),
        postgres: perRequest(taken.postgres),
        load: perRequest((self.user + self.system) / 1e6),
      },
    }),
  };
  console.error(`  ${name}: ${row.rps} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, non-2xx ${row.non2xx}, errors ${row.errors}`);
  if (row.offered) {
    const o = row.offered;
    console.error(`    offered ${base.overallRate} req/s over ${base.connections} connections (one request each ${o.interval} ms): p99 ${row.p99} ms corrected at that interval, ${o.rawP99} ms uncorrected, autocannon's ${row.autocannonP99} ms (corrected at 1 ms); ${o.over20ms} of ${o.responses} responses took 20 ms or more`);
  }
  return row;
}

function rssOf(pid) {
  return readFile(`/proc/${pid}/status`, 'utf8').then((s) => Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0) * 1024);
}

async function main() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'promotions-bench-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const key = `service_${alnum(12)}_${alnum(40)}`;
  const port = await freePort();
  const env = serviceEnv({
    dataDir,
    port,
    healthPort: await freePort(),
    key,
    extra: {
      ENGINE_CACHE_SIZE: process.env.ENGINE_CACHE_SIZE ?? '100000',
      // One web process, as the rows before WEB_PROCESSES had; `npm run bench:scale` compares 1 with 2.
      WEB_PROCESSES: process.env.WEB_PROCESSES ?? '1',
    },
  });
  console.error(`starting the service (embedded PostgreSQL under ${dataDir}) ...`);
  const startService = (serviceEnv) => startServiceProcess(root, serviceEnv, cleanups);
  const service = (await startService(env)).child;
  const baseUrl = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${key}` };
  const api = async (method, p, body) => {
    const res = await fetch(`${baseUrl}/api/v1${p}`, { method, headers: { ...auth, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };

  console.error('seeding ...');
  await api('POST', '/vouchers', { code: 'HOT', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, currency: 'EUR', redemptionLimit: 2_000_000_000 });
  await api('POST', '/vouchers', { code: 'VALIDATE', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } });
  await api('POST', '/vouchers', { code: 'TARGETED', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 15, target: { categories: ['c1'], metadata: { brand: 'acme' } } } });
  await api('POST', '/vouchers', { code: 'GIFT', type: 'GIFT_CARD', gift: { amount: 1_000_000_000_000, currency: 'EUR' } });
  // A loyalty member paying with points, 1 point = 1 cent: its code redeems like the gift card above.
  const club = await api('POST', '/campaigns', { name: 'club', type: 'LOYALTY_PROGRAM', currency: 'EUR', loyalty: { payWithPoints: { pointValue: { points: 1, amount: 1 } } } });
  const clubCustomer = await api('POST', '/customers', { sourceId: 'bench-member' });
  const card = await api('POST', `/loyalty/programs/${club.id}/members`, { customer: { id: clubCustomer.id }, code: 'POINTS' });
  await api('POST', `/loyalty/members/${card.id}/points`, { points: 1_000_000_000_000 });
  for (const [code, priority, discount] of [['S1', 3, { type: 'PERCENT', percentOff: 10 }], ['S2', 2, { type: 'AMOUNT', amountOff: 100 }], ['S3', 1, { type: 'AMOUNT', amountOff: 50 }]]) {
    await api('POST', '/vouchers', { code, type: 'DISCOUNT', discount, currency: 'EUR', priority });
  }
  const spreadCampaign = await api('POST', '/campaigns', { name: 'spread', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, redemptionLimit: 1_000_000 } });
  const spread = (await api('POST', `/campaigns/${spreadCampaign.id}/vouchers/generate`, { count: 10_000 })).codes;
  // The rollup-off service's own codes, alike: a code written by both processes would make their caches go stale.
  const spreadOffCampaign = await api('POST', '/campaigns', { name: 'spread, rollup off', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, redemptionLimit: 1_000_000 } });
  const spreadOff = (await api('POST', `/campaigns/${spreadOffCampaign.id}/vouchers/generate`, { count: 10_000 })).codes;

  const state = JSON.parse(await readFile(path.join(dataDir, 'embedded-postgres.json'), 'utf8'));
  const databaseUrl = `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/promotions`;
  const peerPort = await freePort();
  await startReference('naive-peer.mjs', [String(peerPort), databaseUrl]);
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const seeded = await fetch(`${peerUrl}/seed`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ codes: ['HOT', ...spread], limit: null, customers: Array.from({ length: 1000 }, (_, i) => `shopper-${i}`) }) });
  if (seeded.status !== 200) throw new Error(`seeding the naive peer failed: ${seeded.status}`);
  const barePort = await freePort();
  const bareServer = await startReference('fixed-json.mjs', ['bare', String(barePort)]);
  const expressPort = await freePort();
  await startReference('fixed-json.mjs', ['express', String(expressPort)]);

  const order = { amount: 10_000, currency: 'EUR' };
  const orderBody = JSON.stringify({ order });
  const pick = () => spread[Math.floor(Math.random() * spread.length)];
  const loadService = (name, options) => load(name, options, service.pid);
  console.error(`running: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s per scenario`);
  // With its pid: bare node:http's own CPU a request, the unit the CPU table measures every row in.
  const bare = await load('bare node:http, fixed JSON', { url: `http://127.0.0.1:${barePort}/x`, body: orderBody }, bareServer.pid);
  const expressRef = await load('express 5, fixed JSON', { url: `http://127.0.0.1:${expressPort}/x`, body: orderBody });
  const peerHot = await load('naive peer: redeem one hot code', { url: `${peerUrl}/vouchers/HOT/redemption`, headers: auth, body: orderBody });
  const peerSpread = await load('naive peer: redeem over 10,000 codes', {
    url: peerUrl,
    headers: auth,
    requests: [{ method: 'POST', setupRequest: (req) => ({ ...req, path: `/vouchers/${pick()}/redemption`, body: orderBody }) }],
  });
  const validate = await loadService('validate, hot code', { url: `${baseUrl}/api/v1/vouchers/VALIDATE/validate`, headers: auth, body: orderBody });
  // A checkout's cart as shops send it (issue 33): 20 items in 4 categories, half of them one brand; the voucher takes
  // 15% off the brand's items of one category, spread over those lines.
  const cartItems = Array.from({ length: 20 }, (_, i) => ({ productId: `p${i}`, sku: `sku-${i}`, quantity: 1 + (i % 3), price: 500 + 137 * i, categories: [`c${i % 4}`], metadata: { brand: i % 2 ? 'acme' : 'other' } }));
  const cartBody = JSON.stringify({ order: { amount: cartItems.reduce((a, i) => a + i.quantity * i.price, 0) + 490, currency: 'EUR', items: cartItems, shipping: { amount: 490 } } });
  const targetedAnswer = await (await fetch(`${baseUrl}/api/v1/vouchers/TARGETED/validate`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: cartBody })).json();
  if (!targetedAnswer.valid || !(targetedAnswer.discount.amount > 0)) throw new Error(`the target discount gave nothing: ${JSON.stringify(targetedAnswer)}`);
  const validateTargeted = await loadService('validate, 20 items, target discount', { url: `${baseUrl}/api/v1/vouchers/TARGETED/validate`, headers: auth, body: cartBody });
  const hot = await loadService('redeem, one hot code', { url: `${baseUrl}/api/v1/vouchers/HOT/redemption`, headers: auth, body: orderBody });
  // As checkouts call it: each redemption with its own Idempotency-Key (stored with the outcome in the same commit).
  const keyedRequests = [{ method: 'POST', path: '/api/v1/vouchers/HOT/redemption', setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() }, body: orderBody }) }];
  const hotKeyed = await loadService('redeem, hot code, Idempotency-Key', { url: baseUrl, headers: auth, requests: keyedRequests });
  // As checkouts call it: naming the customer by sourceId, a returning one (1,000 seeded in SQL) or a new one each time
  // (created with its customer.created event before the redemption).
  const shoppers = new pg.Client({ connectionString: databaseUrl });
  shoppers.on('error', () => undefined);
  await shoppers.connect();
  await shoppers.query(`INSERT INTO customers (workspace_id, source_id) SELECT $1, 'shopper-' || i FROM generate_series(0, 999) AS i`, [(await api('GET', '/workspace')).id]);
  await shoppers.query('ANALYZE customers');
  await shoppers.end();
  const returningRequests = [{ method: 'POST', path: '/api/v1/vouchers/HOT/redemption', setupRequest: (req) => ({ ...req, body: JSON.stringify({ order, customer: { sourceId: `shopper-${Math.floor(Math.random() * 1000)}` } }) }) }];
  const hotReturning = await loadService('redeem, hot code, returning customer', { url: baseUrl, headers: auth, requests: returningRequests });
  // The checkout shops really send: an Idempotency-Key, a returning customer, a 3-item order, one hot code; and the
  // naive peer doing the same (its own customers and keys, one transaction a checkout).
  const checkoutBody = () => {
    const items = [0, 1, 2].map((i) => ({ productId: `p${i}-${Math.floor(Math.random() * 50)}`, quantity: 1 + (i % 2), price: 1000 + Math.floor(Math.random() * 3000) }));
    return JSON.stringify({ order: { amount: items.reduce((a, x) => a + x.quantity * x.price, 0), currency: 'EUR', items }, customer: { sourceId: `shopper-${Math.floor(Math.random() * 1000)}` } });
  };
  const checkoutRequest = (path) => [{ method: 'POST', path, setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() }, body: checkoutBody() }) }];
  const peerCheckout = await load('naive peer: checkout (key, customer, 3 items)', { url: peerUrl, headers: auth, requests: checkoutRequest('/checkout/HOT/redemption') });
  const checkout = await loadService('checkout: key, returning customer, 3 items', { url: baseUrl, headers: auth, requests: checkoutRequest('/api/v1/vouchers/HOT/redemption') });
  const newCustomerRequests = [{ method: 'POST', path: '/api/v1/vouchers/HOT/redemption', setupRequest: (req) => ({ ...req, body: JSON.stringify({ order, customer: { sourceId: randomUUID() } }) }) }];
  const hotNew = await loadService('redeem, hot code, new customer', { url: baseUrl, headers: auth, requests: newCustomerRequests });
  // The same rows against the floor (issue 36), right after the service's, on the same PostgreSQL.
  const floorPicked = !ONLY.length || ONLY.includes('floor');
  const floor = floorPicked ? await startFloor(root, databaseUrl, cleanups) : undefined;
  const floorRequests = (requests) => requests.map((r) => ({ ...r, path: r.path.replace(/^\/api\/v1\/vouchers\/(\w+)\/redemption$/, '/redeem/$1') }));
  // Each row once more with the floor's writer on a thread of its own, the design card's partition: the least the
  // design allows, which the CPU and p99 targets are judged on (keys with `Thread` after them).
  const floorScenarios = (f, label) => ({
    validate: [`${label}: validate, hot code`, { url: `${f.url}/validate/VALIDATE`, headers: auth, body: orderBody }],
    hot: [`${label}: redeem, one hot code`, { url: `${f.url}/redeem/HOT`, headers: auth, body: orderBody }],
    keyed: [`${label}: hot code, Idempotency-Key`, { url: f.url, headers: auth, requests: floorRequests(keyedRequests) }],
    returning: [`${label}: hot code, returning customer`, { url: f.url, headers: auth, requests: floorRequests(returningRequests) }],
    checkout: [`${label}: checkout`, { url: f.url, headers: auth, requests: floorRequests(checkoutRequest('/api/v1/vouchers/HOT/redemption')) }],
    newCustomer: [`${label}: hot code, new customer`, { url: f.url, headers: auth, requests: floorRequests(newCustomerRequests) }],
  });
  const floors = {};
  if (floor) {
    const loadFloor = (pid) => (name, options) => load(name, options, { node: pid, postgres: service.pid });
    Object.assign(floors, await floorRows(loadFloor(floor.pid), {
      ...floorScenarios(floor, 'floor'),
      hotAgain: ['floor: redeem, one hot code, again', { url: `${floor.url}/redeem/HOT`, headers: auth, body: orderBody }],
    }));
    const threaded = await startFloor(root, databaseUrl, cleanups, { thread: true });
    const rows = await floorRows(loadFloor(threaded.pid), floorScenarios(threaded, 'floor, writer thread'));
    for (const [key, row] of Object.entries(rows)) floors[`${key}Thread`] = row;
  }
  const spreadRow = await loadService('redeem over 10,000 codes', {
    url: baseUrl,
    headers: auth,
    requests: [{ method: 'POST', setupRequest: (req) => ({ ...req, path: `/api/v1/vouchers/${pick()}/redemption`, body: orderBody }) }],
  });
  const compared = { env, databaseUrl, baseUrl, auth, orderBody, spread, spreadOff, startService, api, load, warmUp };
  const rollupRows = ROLLUP_COMPARE ? await compareSetting({ name: 'rollup', offEnv: { INSIGHTS_ROLLUP: 'false' } }, ['hot', 'spread'], { ...compared, rounds: ROLLUP_ROUNDS }) : [];
  const metricsRows = METRICS_COMPARE ? await compareSetting({ name: 'metrics', offEnv: { METRICS: 'off' } }, ['validate', 'hot', 'spread'], { ...compared, rounds: METRICS_ROUNDS }) : [];
  const gift = await loadService('gift card redeem, hot card', { url: `${baseUrl}/api/v1/vouchers/GIFT/redemption`, headers: auth, body: JSON.stringify({ amount: 1 }) });
  const points = await loadService('pay with points, hot card', { url: `${baseUrl}/api/v1/vouchers/POINTS/redemption`, headers: auth, body: JSON.stringify({ amount: 1 }) });
  const stack = await loadService('3-voucher stack', {
    url: baseUrl,
    headers: auth,
    requests: [
      {
        method: 'POST',
        path: '/api/v1/redemptions/stack',
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ vouchers: [{ code: 'S1' }, { code: 'S2' }, { code: 'S3' }], order, idempotencyKey: randomUUID() }) }),
      },
    ],
  });

  // Qualification with 20,000 active tiers and vouchers in the workspace: 10,000 tiers (9,800 bound to a product and
  // a minimum amount, 200 with an amount threshold only) and 10,000 vouchers assigned to 2,000 customers, seeded in SQL
  // (AMOUNT discounts, so each names its currency as the API requires since issue 18: 3 in EUR and 2 in USD per customer).
  const workspace = await api('GET', '/workspace');
  const seedDb = new pg.Client({ connectionString: databaseUrl });
  seedDb.on('error', () => undefined);
  await seedDb.connect();
  const promo = await api('POST', '/campaigns', { name: 'automatic', type: 'PROMOTION' });
  console.error('seeding 10,000 tiers and 10,000 customer vouchers ...');
  await seedDb.query(
    `WITH rules AS (
       INSERT INTO validation_rules (workspace_id, id, name, conditions)
       SELECT $1, gen_random_uuid(), 'rule ' || i,
              CASE WHEN i < 9800
                   THEN jsonb_build_object('all', jsonb_build_array(
                          jsonb_build_object('field', 'order.items.productId', 'op', 'contains', 'value', 'p' || (i % 4900)),
                          jsonb_build_object('field', 'order.amount', 'op', 'gte', 'value', (i % 5) * 2000)))
                   ELSE jsonb_build_object('field', 'order.amount', 'op', 'gte', 'value', 1000 + (i - 9800) * 100) END
         FROM generate_series(0, 9999) AS i
       RETURNING id, name),
     numbered AS (SELECT row_number() OVER () - 1 AS i, id AS rule_id, gen_random_uuid() AS tier_id FROM rules)
     INSERT INTO vouchers (workspace_id, id, code, campaign_id, type, kind, name, currency, discount, validation_rule_ids)
     SELECT $1, tier_id, 'tier:' || tier_id, $2, 'DISCOUNT', 'TIER', 'tier ' || i, CASE WHEN i % 2 = 0 THEN 'EUR' ELSE 'USD' END,
            jsonb_build_object('type', 'PERCENT', 'percentOff', 5 + i % 20), ARRAY[rule_id]
       FROM numbered`,
    [workspace.id, promo.id],
  );
  await seedDb.query(
    `WITH cs AS (
       INSERT INTO customers (workspace_id, id, source_id) SELECT $1, gen_random_uuid(), 'bench-' || i FROM generate_series(0, 1999) AS i RETURNING id)
     INSERT INTO vouchers (workspace_id, code, type, currency, discount, customer_id)
     SELECT $1, 'CV-' || substr(md5(random()::text), 1, 12), 'DISCOUNT', CASE WHEN k % 2 = 0 THEN 'EUR' ELSE 'USD' END,
            jsonb_build_object('type', 'AMOUNT', 'amountOff', 100 + k * 50), cs.id
       FROM cs CROSS JOIN generate_series(0, 4) AS k`,
    [workspace.id],
  );
  // What autovacuum does soon after a bulk load: planner statistics for the new rows.
  await seedDb.query('ANALYZE vouchers; ANALYZE validation_rules; ANALYZE customers');
  await seedDb.end();
  const cartOf = () => {
    const items = [0, 1, 2].map(() => ({ productId: 'p' + Math.floor(Math.random() * 4900), quantity: 1, price: 1000 + Math.floor(Math.random() * 6000) }));
    return { amount: items.reduce((a, i) => a + i.price, 0), currency: Math.random() < 0.5 ? 'EUR' : 'USD', items };
  };
  const qualificationBody = () => JSON.stringify({ order: cartOf(), customer: { sourceId: 'bench-' + Math.floor(Math.random() * 2000) } });
  // Retried while 503: on a loaded machine the process may be taking its slots back after the comparisons.
  let sampleAnswer;
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await fetch(`${baseUrl}/api/v1/qualifications`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: qualificationBody() });
    sampleAnswer = await res.json();
    if (res.status !== 503) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (!Array.isArray(sampleAnswer.data) || sampleAnswer.data.length === 0) throw new Error(`qualification answered nothing: ${JSON.stringify(sampleAnswer)}`);
  const QUAL_CONNECTIONS = 10;
  const peerQualification = await load('naive peer: qualification, 20k', {
    url: peerUrl,
    connections: QUAL_CONNECTIONS,
    headers: auth,
    requests: [{ method: 'POST', path: `/workspaces/${workspace.id}/qualifications`, setupRequest: (req) => ({ ...req, body: qualificationBody() }) }],
  });
  const qualification = await loadService('qualification, 20k tiers and vouchers', {
    url: baseUrl,
    connections: QUAL_CONNECTIONS,
    headers: auth,
    requests: [{ method: 'POST', path: '/api/v1/qualifications', setupRequest: (req) => ({ ...req, body: qualificationBody() }) }],
  });
  // Latency at a steady offered load (what a checkout sees), not at saturation, where p99 is mostly queueing.
  const QUAL_RATE = 500;
  const qualificationAtRate = await loadService(`qualification, 20k, ${QUAL_RATE} req/s offered`, {
    url: baseUrl,
    connections: QUAL_CONNECTIONS,
    overallRate: QUAL_RATE,
    headers: auth,
    requests: [{ method: 'POST', path: '/api/v1/qualifications', setupRequest: (req) => ({ ...req, body: qualificationBody() }) }],
  });

  const { deal10, deal20, preview: stackPreview } = await bestDealRows({ api, baseUrl, auth, loadService, order });

  const peerCheck = await (await fetch(`${peerUrl}/vouchers/${spread[0]}/redemption`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: orderBody })).json();
  if (!peerCheck.ok) throw new Error(`the naive peer refused a seeded code: ${JSON.stringify(peerCheck)}`);
  const ready = await (await fetch(`${baseUrl}/ready`)).json();
  const partitionStats = ready.checks?.partitions?.partitions ?? [];
  // Every acknowledged use is in the database: the counters equal the rows.
  const hotVoucher = await api('GET', '/vouchers/HOT');
  const hotRows = await api('GET', '/redemptions?voucherCode=HOT&limit=1');
  const giftCard = await api('GET', '/vouchers/GIFT');

  const ratio = (a, b) => (b.rps ? (a.rps / b.rps).toFixed(1) + 'x' : '-');
  const rows = [
    [bare, null], [expressRef, null], [peerHot, null], [peerSpread, null],
    [validate, peerHot], [validateTargeted, peerHot], [hot, peerHot], [hotKeyed, peerHot], [hotReturning, peerHot], [peerCheckout, null], [checkout, peerCheckout], [hotNew, peerHot], [spreadRow, peerSpread], [gift, peerHot], [points, peerHot], [stack, peerHot], [stackPreview, peerHot],
    [peerQualification, null], [qualification, peerQualification], [qualificationAtRate, peerQualification], [deal10, peerQualification], [deal20, peerQualification],
  ];
  const pad = (s, n) => String(s).padEnd(n);
  const lines = [
    `| ${pad('scenario', 38)} | ${pad('req/s', 7)} | ${pad('p50 ms', 6)} | ${pad('p99 ms', 6)} | ${pad('vs naive peer', 13)} | ${pad('vs express', 10)} | ${pad('vs node:http', 12)} |`,
    `|${'-'.repeat(40)}|${'-'.repeat(9)}|${'-'.repeat(8)}|${'-'.repeat(8)}|${'-'.repeat(15)}|${'-'.repeat(12)}|${'-'.repeat(14)}|`,
    ...rows.map(([r, peer]) => `| ${pad(r.name, 38)} | ${pad(r.rps, 7)} | ${pad(r.p50, 6)} | ${pad(r.p99, 6)} | ${pad(peer ? ratio(r, peer) : '', 13)} | ${pad(peer ? ratio(r, expressRef) : '', 10)} | ${pad(peer ? ratio(r, bare) : '', 12)} |`),
  ];
  console.log(`\nHot path, ${CONNECTIONS} connections, ${DURATION} s each, ${os.availableParallelism()} CPUs (load generator included)\n`);
  console.log(lines.join('\n'));
  // The targets of issue 19 (raised from 5x, 10x and 5x for spread, gift card and stack).
  const check = (label, ok) => console.log(`${ok ? 'met ' : 'MISSED'}  ${label}`);
  console.log('');
  check(`hot-code redeem >= 10x naive peer (${ratio(hot, peerHot)}) with p99 < 25 ms (${hot.p99} ms)`, hot.rps >= 10 * peerHot.rps && hot.p99 < 25);
  check(`spread redeem >= 8x naive peer (${ratio(spreadRow, peerSpread)})`, spreadRow.rps >= 8 * peerSpread.rps);
  check(`gift-card hot redeem >= 15x naive peer (${ratio(gift, peerHot)})`, gift.rps >= 15 * peerHot.rps);
  console.log(`info  pay with points against the gift card, both on one hot card: ${ratio(points, gift)} (${points.rps} / ${gift.rps} req/s; p99 ${points.p99} / ${gift.p99} ms)`);
  check(`3-voucher stack >= 8x the peer's single redeem (${ratio(stack, peerHot)})`, stack.rps >= 8 * peerHot.rps);
  check(`validate >= 0.5x bare node:http (${ratio(validate, bare)})`, validate.rps >= 0.5 * bare.rps);
  check(
    `qualification with 20,000 tiers and vouchers: p99 < 20 ms at ${QUAL_RATE} req/s offered (${qualificationAtRate.p99} ms${atRate(qualificationAtRate)}; ${qualification.p99} ms at saturation, ${qualification.rps} req/s; naive peer p99 ${peerQualification.p99} ms at ${peerQualification.rps} req/s)`,
    qualificationAtRate.rps > 0 && qualificationAtRate.p99 < 20,
  );
  console.log(`info  stack preview against the stack it previews: ${ratio(stackPreview, stack)} (${stackPreview.rps} / ${stack.rps} req/s; p99 ${stackPreview.p99} / ${stack.p99} ms)`);
  for (const [n, row] of [[10, deal10], [20, deal20]]) check(`best deal over ${n} offers: p99 < 20 ms at ${BEST_DEAL_RATE} req/s offered (${row.p99} ms, ${row.rps} req/s${atRate(row)})`, row.rps > 0 && row.p99 < 20);
  printCpuTable({ bare, peerHot, peerSpread, peerCheckout, validate, hot, hotKeyed, hotReturning, checkout, hotNew, spreadRow, gift, points, stack }, check);
  printFloor({ validate, hot, keyed: hotKeyed, returning: hotReturning, checkout, newCustomer: hotNew }, floors, bare, CONNECTIONS);
  printComparison('Insights rollup on against off (INSIGHTS_ROLLUP=false; two processes started for it on the same database)', 'rollup', rollupRows, check);
  printComparison('Metrics on against off (METRICS=off; two processes started for it on the same database)', 'metrics', metricsRows, check);
  for (const p of partitionStats) {
    console.log(`partition ${p.partition}: ${p.batches} batches, ${p.averageBatch} writes per batch, ${p.averageCommitMs} ms per commit, ${p.guardRetries} guard retries, ${p.cached} vouchers cached`);
  }
  console.log(`consistency: HOT redeemedCount ${hotVoucher.redemption.redeemedCount} (rows listed: ${hotRows.data.length ? 'yes' : 'no'}); GIFT balance ${giftCard.gift.balance}`);

  if (!ONLY.length || ONLY.some((w) => 'earning'.includes(w))) await earningThroughput({ api, databaseUrl, cleanups });

  if (BULK > 0) {
    console.error(`generating ${BULK} codes ...`);
    const bulkCampaign = await api('POST', '/campaigns', { name: 'bulk', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 } } });
    const started = performance.now();
    const sample = [];
    for (let made = 0; made < BULK; ) {
      const count = Math.min(100_000, BULK - made);
      const { codes } = await api('POST', `/campaigns/${bulkCampaign.id}/vouchers/generate`, { count, codeConfig: { length: 12 } });
      for (let i = 0; i < codes.length; i += 50) sample.push(codes[i]);
      made += count;
    }
    const seconds = (performance.now() - started) / 1000;
    const before = await rssOf(service.pid);
    const spreadAll = () => sample[Math.floor(Math.random() * sample.length)];
    await autocannon({
      url: baseUrl,
      connections: CONNECTIONS,
      duration: 10,
      headers: { ...auth, 'content-type': 'application/json' },
      requests: [{ method: 'POST', setupRequest: (req) => ({ ...req, path: `/api/v1/vouchers/${spreadAll()}/validate`, body: orderBody }) }],
    });
    const after = await rssOf(service.pid);
    console.log(`\nbulk: ${BULK.toLocaleString('en')} codes generated and inserted in ${seconds.toFixed(1)} s (${Math.round(BULK / seconds).toLocaleString('en')} codes/s, 100,000 per call)`);
    console.log(`RSS of the service (web + ${os.availableParallelism()} partition threads) with ${(BULK + 10_006).toLocaleString('en')} vouchers in the database: ${(before / 2 ** 20).toFixed(0)} MB after generation, ${(after / 2 ** 20).toFixed(0)} MB after validating ${sample.length.toLocaleString('en')} distinct codes for 10 s (cache bound ${env.ENGINE_CACHE_SIZE} vouchers per partition)`);
  }
}

runBounded(main, TIMEOUT_MS, cleanups);
