// 1 against 2 web processes on this machine, in one run: the same service (embedded PostgreSQL under a temp folder,
// or DATABASE_URL) started with WEB_PROCESSES=1, then =2, driven by autocannon from this process on the same cores.
// For each: req/s, p99, and the CPU each part took during the measured seconds, read from /proc: the web processes
// (node, the cluster's primary included), PostgreSQL, and this load generator; throughput per core of the service's
// own node processes is compared between the two. A bare node:http server is measured in the same run as the ceiling.
// Bounded: BENCH_DURATION_S per scenario (default 10), BENCH_CONNECTIONS (50), hard limit BENCH_TIMEOUT_S (600).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuBetween, freePort, runBounded, serviceEnv, startServiceProcess, treeCpu, waitFor } from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP = Math.min(3, DURATION);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 600) * 1000;
const cleanups = [];
const alnum = (n) => [...randomBytes(n)].map((b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');

async function main() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'promotions-scale-bench-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const key = `service_${alnum(12)}_${alnum(40)}`;
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${key}` };
  const start = async (webProcesses) => {
    const env = serviceEnv({ dataDir, port, healthPort: await freePort(), key, extra: { WEB_PROCESSES: String(webProcesses) } });
    const { child, stop } = await startServiceProcess(root, env, cleanups);
    // Every slot held before measuring (a second web process takes its half within a lease tick or two).
    for (let i = 0; i < 40; i++) {
      const ready = await (await fetch(`${baseUrl}/ready`)).json();
      const held = ready.checks.partitions.leases;
      if (held.members === webProcesses && held.owned.length === 64 / webProcesses) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    return { child, stop };
  };
  const api = async (method, p, body) => {
    const res = await fetch(`${baseUrl}/api/v1${p}`, { method, headers: { ...auth, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const orderBody = JSON.stringify({ order: { amount: 10_000, currency: 'EUR' } });

  const bareScript = path.join(root, 'bench/reference/fixed-json.mjs');
  const barePort = await freePort();
  const bare = spawn(process.execPath, [bareScript, 'bare', String(barePort)], { stdio: 'ignore' });
  cleanups.push(async () => bare.kill());
  await waitFor(`http://127.0.0.1:${barePort}/x`, bare, () => '').catch(() => undefined);

  const measure = async (name, options, rootPid) => {
    const base = { connections: CONNECTIONS, method: 'POST', ...options, headers: { 'content-type': 'application/json', ...options.headers } };
    await autocannon({ ...base, duration: WARMUP });
    const [before, selfBefore] = [rootPid ? await treeCpu(rootPid) : undefined, process.cpuUsage()];
    const result = await autocannon({ ...base, duration: DURATION });
    const after = rootPid ? await treeCpu(rootPid) : undefined;
    const self = process.cpuUsage(selfBefore);
    const taken = after && cpuBetween(before, after);
    const seconds = DURATION;
    const row = {
      name,
      rps: Math.round(result.requests.average),
      p99: result.latency.p99,
      non2xx: result.non2xx,
      webCores: taken ? taken.node / seconds : 0,
      pgCores: taken ? taken.postgres / seconds : 0,
      loadCores: (self.user + self.system) / 1e6 / seconds,
    };
    if (result.non2xx > result.requests.total / 100) throw new Error(`${name}: ${result.non2xx} of ${result.requests.total} answers were not 2xx`);
    console.error(`  ${name}: ${row.rps} req/s, p99 ${row.p99} ms, web ${row.webCores.toFixed(2)} / pg ${row.pgCores.toFixed(2)} / load ${row.loadCores.toFixed(2)} cores`);
    return row;
  };

  console.error(`scale bench: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s per scenario, ${os.availableParallelism()} cores`);
  const rows = [await measure('bare node:http, fixed JSON', { url: `http://127.0.0.1:${barePort}/x`, body: orderBody })];

  let service = await start(1);
  await api('POST', '/vouchers', { code: 'HOT', type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 500 }, redemptionLimit: 2_000_000_000 });
  const campaign = await api('POST', '/campaigns', { name: 'spread', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, redemptionLimit: 1_000_000 } });
  const spread = (await api('POST', `/campaigns/${campaign.id}/vouchers/generate`, { count: 10_000 })).codes;
  const pick = () => spread[Math.floor(Math.random() * spread.length)];
  const scenarios = (n) => [
    [`redeem, one hot code (${n} web)`, { url: `${baseUrl}/api/v1/vouchers/HOT/redemption`, headers: auth, body: orderBody }],
    [
      `redeem over 10,000 codes (${n} web)`,
      { url: baseUrl, headers: auth, requests: [{ method: 'POST', setupRequest: (req) => ({ ...req, path: `/api/v1/vouchers/${pick()}/redemption`, body: orderBody }) }] },
    ],
    [`validate, hot code (${n} web)`, { url: `${baseUrl}/api/v1/vouchers/HOT/validate`, headers: auth, body: orderBody }],
  ];
  const byProcesses = {};
  for (const n of [1, 2]) {
    if (n !== 1) service = await start(n);
    byProcesses[n] = [];
    for (const [name, options] of scenarios(n)) byProcesses[n].push(await measure(name, options, service.child.pid));
    await service.stop();
  }
  rows.push(...byProcesses[1], ...byProcesses[2]);

  const pad = (s, n) => String(s).padEnd(n);
  console.log(`\n${pad('scenario', 36)} ${pad('req/s', 8)} ${pad('p99 ms', 7)} ${pad('non2xx', 7)} ${pad('web cores', 10)} ${pad('pg cores', 9)} ${pad('load cores', 11)} req/s per web core  x bare`);
  for (const r of rows) {
    const perCore = r.webCores ? Math.round(r.rps / r.webCores) : '';
    console.log(
      `${pad(r.name, 36)} ${pad(r.rps, 8)} ${pad(r.p99, 7)} ${pad(r.non2xx, 7)} ${pad(r.webCores.toFixed(2), 10)} ${pad(r.pgCores.toFixed(2), 9)} ${pad(r.loadCores.toFixed(2), 11)} ${pad(perCore, 19)} ${(r.rps / rows[0].rps).toFixed(2)}x`,
    );
  }
  console.log('\nthroughput per web core, 2 processes against 1:');
  for (let i = 0; i < byProcesses[1].length; i++) {
    const [one, two] = [byProcesses[1][i], byProcesses[2][i]];
    const ratio = two.rps / two.webCores / (one.rps / one.webCores);
    console.log(`  ${one.name.replace(/ \(1 web\)$/, '')}: ${(ratio * 100).toFixed(0)} % (req/s ${one.rps} → ${two.rps}, ${(two.rps / one.rps).toFixed(2)}x)`);
  }
}

runBounded(main, TIMEOUT_MS, cleanups);
