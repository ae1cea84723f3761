// Server-side connections cut with pg_terminate_backend while requests run (the listener, an import's COPY session,
// and every pooled one: leases, partitions, jobs): no process of the service ends, and it serves again afterwards.
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { baseEnv, freePort, isAlive, processTree, spawnService, type ServiceProcess } from '../support/processes.js';

let db: TestDatabase;
let service: ServiceProcess;
let workerPort: number;
const admin = generateApiKey();
const headers = { authorization: `Bearer ${admin.key}`, 'content-type': 'application/json' };
beforeAll(async () => {
  db = await createTestDatabase();
  const port = await freePort();
  workerPort = await freePort();
  service = spawnService(
    baseEnv({ DATABASE_URL: db.url, PORT: String(port), WORKER_HEALTH_PORT: String(workerPort), BOOTSTRAP_API_KEY: admin.key, WEB_PROCESSES: '2', LOG_LEVEL: 'warn' }),
    port,
  );
  await service.waitForReady(90_000);
  // The primary starts the background worker once its web processes listen: its start is not what is tested here.
  expect(await answersWithin(`http://127.0.0.1:${workerPort}/health`, 60_000)).toBe(true);
}, 120_000);
afterAll(async () => {
  await service?.stop('SIGKILL').catch(() => undefined);
  await db?.drop();
});

/** Terminates the service's backends on the test database that match `where`; how many went. */
async function terminate(where: string): Promise<number> {
  const { rows } = await db.pool.query<{ killed: boolean }>(
    `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
       AND application_name LIKE 'promotions-service%' AND (${where})`,
  );
  return rows.filter((r) => r.killed).length;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function redeem(code: string): Promise<number> {
  const res = await fetch(`${service.baseUrl}/api/v1/vouchers/${code}/redemption`, { method: 'POST', headers, body: JSON.stringify({ order: { amount: 1000, currency: 'EUR' } }) });
  await res.arrayBuffer();
  return res.status;
}

/** A CSV import streamed over about `ms`, one row at a time: its COPY session is open while the rows come. */
function slowImport(ms: number): Promise<number | string> {
  const rows = 60;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === 0) controller.enqueue(new TextEncoder().encode('sourceId,email\n'));
      if (sent >= rows) return controller.close();
      await sleep(ms / rows);
      controller.enqueue(new TextEncoder().encode(`cut-${sent},cut-${sent}@example.com\n`));
      sent++;
    },
  });
  return fetch(`${service.baseUrl}/api/v1/customers/import`, {
    method: 'POST',
    headers: { authorization: headers.authorization, 'content-type': 'text/csv' },
    body,
    duplex: 'half',
  } as RequestInit).then(
    async (res) => (await res.arrayBuffer(), res.status),
    (error: Error) => `cut: ${error.message}`,
  );
}

async function answersWithin(url: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((await fetch(url).then((r) => r.status, () => 0)) === 200) return true;
    await sleep(250);
  }
  return false;
}

describe('a lost database connection', () => {
  it('ends no process: the listener, an import session and every pooled connection cut while requests run', async () => {
    const before = processTree(service.child.pid!);
    const created = await fetch(`${service.baseUrl}/api/v1/vouchers`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ code: 'CUT-1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 }, redemptionLimit: 100_000 }),
    });
    expect(created.status).toBe(201);

    // Redemptions run throughout (bounded: 25 s or 2,000 requests), 4 at a time.
    const statuses: number[] = [];
    const stopAt = Date.now() + 25_000;
    let load = true;
    const lanes = Array.from({ length: 4 }, async () => {
      while (load && Date.now() < stopAt && statuses.length < 2_000) statuses.push(await redeem('CUT-1').catch(() => 0));
    });

    const importing = slowImport(4_000);
    let copyKilled = 0;
    for (let i = 0; i < 60 && copyKilled === 0; i++) {
      await sleep(50);
      copyKilled = await terminate(`query ILIKE 'COPY%'`);
    }
    const listenersKilled = await terminate(`application_name = 'promotions-service-listener'`);
    let pooledKilled = 0;
    for (let round = 0; round < 5; round++) {
      await sleep(300);
      pooledKilled += await terminate(`application_name = 'promotions-service'`);
    }
    const importAnswer = await importing;
    load = false;
    await Promise.all(lanes);

    expect(copyKilled, 'an import COPY session was cut').toBe(1);
    expect(listenersKilled, 'a listener per web process was cut').toBeGreaterThanOrEqual(2);
    expect(pooledKilled).toBeGreaterThan(0);
    expect(importAnswer, 'the cut import answers (or its upload is cut), never with a 500').not.toBe(500);
    expect(statuses.filter((s) => s === 500), 'no redemption answered 500').toEqual([]);

    expect(await answersWithin(`${service.baseUrl}/ready`, 30_000), 'ready again').toBe(true);
    expect(processTree(service.child.pid!), `the same processes, none replaced; the service said:\n${service.output().slice(-6_000)}`).toEqual(before);
    expect(service.output()).not.toMatch(/Unhandled 'error' event|a web process exited|background worker exited/);

    // It serves again: a redemption and a whole import.
    expect(await redeem('CUT-1')).toBe(200);
    const again = await fetch(`${service.baseUrl}/api/v1/customers/import`, { method: 'POST', headers: { authorization: headers.authorization, 'content-type': 'text/csv' }, body: 'sourceId\nafter-1\nafter-2\n' });
    expect(again.status).toBe(202);
  }, 120_000);

  it('starts the background worker again when it dies, and /ready names the worker check on a two-process cluster', async () => {
    const ready = (await (await fetch(`${service.baseUrl}/ready`)).json()) as { checks: Record<string, { status: string }> };
    expect(Object.keys(ready.checks).sort()).toEqual(['database', 'migrations', 'partitions', 'worker']);
    const workers = () =>
      execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(service.child.pid!)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes('workers/background.js') && !line.includes('<defunct>'))
        .map((line) => Number(line.trim().split(/\s+/)[0]));
    const [first] = workers();
    expect(first).toBeDefined();
    process.kill(first!, 'SIGKILL');
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (workers().length !== 1 || workers()[0] === first)) await sleep(200);
    expect(workers()).toHaveLength(1);
    expect(workers()[0]).not.toBe(first);
    expect(await answersWithin(`http://127.0.0.1:${workerPort}/health`, 30_000), 'the new worker is healthy').toBe(true);
    expect(service.output()).toContain('background worker exited; starting another');
  }, 60_000);

  it('leaves no process behind when the primary is killed with -9: web processes and the worker follow it', async () => {
    const children = processTree(service.child.pid!).filter((pid) => pid !== service.child.pid);
    expect(children.length).toBeGreaterThanOrEqual(3);
    service.child.kill('SIGKILL');
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && children.some(isAlive)) await sleep(200);
    expect(children.filter(isAlive), 'still running after their primary died').toEqual([]);
  }, 30_000);
});
