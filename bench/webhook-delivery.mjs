// Webhook delivery bench: starts the real service (embedded PostgreSQL in a temp folder, or DATABASE_URL) and a
// separate worker process, delivers events recorded through the API to a receiver on 127.0.0.1, and prints
//   1. commit → first attempt delay (p50, p99) while the queue is idle, events spaced out;
//   2. deliveries/s draining a backlog of N events recorded while the worker was stopped.
// Bounded: BENCH_EVENTS (default 10000) events, BENCH_IDLE_EVENTS (default 200), BENCH_TIMEOUT_S (default 300).
// BENCH_PROFILE=<dir> profiles the worker.
// Talks to the service over HTTP only; nothing here imports src/. Run with `npm run bench:webhooks`.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, runBounded } from './support.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BACKLOG = Number(process.env.BENCH_EVENTS ?? 10_000);
const IDLE_EVENTS = Number(process.env.BENCH_IDLE_EVENTS ?? 200);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 300) * 1000;
const CONCURRENCY = 32;

const cleanups = [];
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Receiver: first arrival per event id, and the delay from the event's createdAt (its transaction) to it. */
async function startReceiver() {
  const firstArrival = new Map();
  let waiting;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const id = req.headers['x-service-event-id'];
      if (!firstArrival.has(id)) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        firstArrival.set(id, { at: now, delayMs: now - Date.parse(body.createdAt) });
        if (waiting && firstArrival.size >= waiting.count) waiting.resolve();
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    firstArrival,
    waitFor(count) {
      if (firstArrival.size >= count) return Promise.resolve();
      return new Promise((resolve) => (waiting = { count, resolve }));
    },
    reset() {
      firstArrival.clear();
    },
  };
}

function startProcess(entry, env, label) {
  // BENCH_PROFILE=<dir> writes a CPU profile of the worker there (node --cpu-prof).
  const profile = process.env.BENCH_PROFILE && label === 'worker' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, path.join(root, entry)], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('exit', (code, signal) => {
    if (code && code !== 0) console.error(`${label} exited with ${code ?? signal}\n${stderr}`);
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  cleanups.push(stop);
  return { child, stop };
}

async function waitFor(probe, label, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await probe().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`${label} not reached in ${timeoutMs} ms`);
}

async function main() {
  const receiver = await startReceiver();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'promotions-bench-'));
  cleanups.unshift(() => rm(dataDir, { recursive: true, force: true }));
  const [port, workerPort] = [await freePort(), await freePort()];
  const bootstrapKey = `service_${randomBytes(6).toString('hex')}_${randomBytes(20).toString('hex')}`;
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    WORKER_HEALTH_PORT: String(workerPort),
    START_WORKER: 'false',
    BOOTSTRAP_API_KEY: bootstrapKey,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'warn',
  };
  const base = `http://127.0.0.1:${port}`;
  const web = startProcess('dist/src/main.js', env, 'web service');
  await waitFor(async () => (await fetch(`${base}/health`)).ok, 'web service health');

  const call = async (key, method, url, body) => {
    const res = await fetch(base + '/api/v1' + url, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}: ${await res.text()}`);
    return res.json();
  };
  const { apiKey } = await call(bootstrapKey, 'POST', '/workspaces', { name: 'webhook bench' });
  await call(apiKey, 'POST', '/webhooks', { url: receiver.url, events: '*' });
  const createCustomers = async (count, concurrency, spacingMs = 0) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) {
          next++;
          await call(apiKey, 'POST', '/customers', {});
          if (spacingMs) await sleep(spacingMs);
        }
      }),
    );
  };

  // 1. Idle queue: one event at a time, spaced out; the worker is running and idle in between.
  let worker = startProcess('dist/workers/background.js', env, 'worker');
  await waitFor(async () => (await fetch(`http://127.0.0.1:${workerPort}/health`)).ok, 'worker health');
  await sleep(1_000);
  await createCustomers(IDLE_EVENTS, 1, 25);
  await receiver.waitFor(IDLE_EVENTS);
  const delays = [...receiver.firstArrival.values()].map((a) => a.delayMs).sort((a, b) => a - b);

  // 2. Backlog: N events recorded while no worker runs, then one worker drains them.
  await worker.stop();
  receiver.reset();
  const recordStarted = performance.now();
  await createCustomers(BACKLOG, CONCURRENCY);
  const recordSeconds = (performance.now() - recordStarted) / 1000;
  const workerStarted = Date.now();
  worker = startProcess('dist/workers/background.js', env, 'worker');
  await receiver.waitFor(BACKLOG);
  const arrivals = [...receiver.firstArrival.values()].map((a) => a.at).sort((a, b) => a - b);
  const drainSeconds = (arrivals[arrivals.length - 1] - arrivals[0]) / 1000;
  const withStartSeconds = (arrivals[arrivals.length - 1] - workerStarted) / 1000;

  const result = {
    idle: { events: IDLE_EVENTS, commitToFirstAttemptMs: { p50: percentile(delays, 50), p99: percentile(delays, 99), max: delays[delays.length - 1] } },
    backlog: {
      events: BACKLOG,
      recordedPerSecond: Math.round(BACKLOG / recordSeconds),
      deliveriesPerSecond: Math.round((BACKLOG - 1) / drainSeconds),
      deliveriesPerSecondIncludingWorkerStart: Math.round(BACKLOG / withStartSeconds),
    },
    machine: { cpus: os.availableParallelism(), node: process.version },
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(
    `\ncommit → first attempt (idle): p50 ${result.idle.commitToFirstAttemptMs.p50} ms, p99 ${result.idle.commitToFirstAttemptMs.p99} ms` +
      `\ndeliveries/s (backlog of ${BACKLOG}): ${result.backlog.deliveriesPerSecond} (with worker start-up: ${result.backlog.deliveriesPerSecondIncludingWorkerStart})`,
  );
  await worker.stop();
  await web.stop();
}

runBounded(main, TIMEOUT_MS, cleanups);
