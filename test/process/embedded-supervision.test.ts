// The web process supervises the embedded PostgreSQL it started (restart after a crash, exit when it cannot), and the
// whole process group stops within seconds when a terminal or a container runtime signals all of it at once.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { retryingUnavailable } from '../support/api-client.js';
import { baseEnv, freePort, isAlive, processTree, spawnService, type ServiceProcess } from '../support/processes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** postmaster.pid: line 1 the server's pid, line 4 its port. */
function postmaster(dataDir: string): { pid: number; port: number } {
  const lines = readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n');
  return { pid: Number(lines[0]), port: Number(lines[3]) };
}


async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A service on its own embedded PostgreSQL in a temp DATA_DIR; whatever is left of it goes in afterAll. */
async function startEmbeddedService(options: { detached?: boolean } = {}) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'promotions-supervision-'));
  const [port, workerPort] = [await freePort(), await freePort()];
  const bootstrap = generateApiKey();
  const env = baseEnv({ DATA_DIR: dataDir, PORT: String(port), WORKER_HEALTH_PORT: String(workerPort), BOOTSTRAP_API_KEY: bootstrap.key });
  const service = spawnService(env, port, options);
  const seen = new Set<number>();
  cleanups.push(async () => {
    for (const pid of processTree(service.child.pid!)) seen.add(pid);
    await service.stop('SIGKILL');
    // Immediate shutdown of a postmaster still running takes its children with it.
    const server = (() => {
      try {
        return postmaster(dataDir).pid;
      } catch {
        return undefined;
      }
    })();
    if (server && isAlive(server)) process.kill(server, 'SIGQUIT');
    await waitFor(() => [...seen].every((pid) => !isAlive(pid)), 5_000, 'leftover processes gone').catch(() => {
      for (const pid of seen) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    });
    await rm(dataDir, { recursive: true, force: true });
  });
  await service.waitForReady(90_000);
  for (const pid of processTree(service.child.pid!)) seen.add(pid);
  return { service, dataDir, apiKey: bootstrap.key };
}

function logLines(service: ServiceProcess): Array<{ level: number; msg: string } & Record<string, unknown>> {
  return service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

describe('the supervised embedded PostgreSQL', () => {
  it('restarts a postmaster killed with SIGKILL, logs the exit once, and redeems again', async () => {
    const { service, dataDir, apiKey } = await startEmbeddedService();
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const killed = postmaster(dataDir);

    process.kill(killed.pid, 'SIGKILL');
    const killedAt = Date.now();
    const restarted = await waitFor(() => logLines(service).find((l) => l.msg === 'embedded PostgreSQL restarted'), 30_000, 'restart');
    await waitFor(async () => (await fetch(`${service.baseUrl}/ready`)).status === 200, 30_000 - (Date.now() - killedAt), '/ready 200');
    const readyAfterMs = Date.now() - killedAt;

    // A request may still meet a pooled connection to the killed server, or this process's partition leases lapsed
    // while PostgreSQL was down and not yet taken again: both answer 503 with Retry-After (seen with other test runs
    // loading the machine). A client sends such a request again, so this one does, for at most 15 s: the create is
    // refused before anything is written, the redemption carries an Idempotency-Key.
    const code = `AFTER-RESTART-${Date.now()}`;
    const describe503 = async (answer: Response) => answer.clone().text();
    const created = await retryingUnavailable(
      () =>
        fetch(`${service.baseUrl}/api/v1/vouchers`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ code, type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } }),
        }),
      describe503,
    );
    expect(created.status, `${await created.clone().text()}\n503s before: ${created.unavailable.join('\n')}\n${service.output().slice(-4_000)}`).toBe(201);
    const redemptionKey = randomUUID();
    const redeemed = await retryingUnavailable(
      () =>
        fetch(`${service.baseUrl}/api/v1/vouchers/${code}/redemption`, {
          method: 'POST',
          headers: { ...headers, 'idempotency-key': redemptionKey },
          body: JSON.stringify({ order: { amount: 1000, currency: 'EUR' } }),
        }),
      describe503,
    );
    const outcome = await redeemed.json();
    expect(redeemed.status, `${JSON.stringify(outcome)}\n503s before: ${redeemed.unavailable.join('\n')}`).toBe(200);
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true });
    const unavailable = [...created.unavailable, ...redeemed.unavailable];

    const exitLines = logLines(service).filter((l) => l.level >= 50 && /embedded PostgreSQL exited/.test(l.msg));
    expect(exitLines).toHaveLength(1);
    expect(exitLines[0]).toMatchObject({ level: 50, pid: killed.pid, signal: 'SIGKILL' });
    const again = postmaster(dataDir);
    expect(again.pid).not.toBe(killed.pid);
    expect(again.port).toBe(killed.port);
    console.info(`postmaster restarted ${restarted.downMs} ms after its exit; /ready 200 ${readyAfterMs} ms after the kill; ${unavailable.length} answer(s) 503 before the write: ${unavailable.join(' ')}`);

    expect((await service.stop('SIGTERM', 10_000)).code).toBe(0);
    expect(isAlive(again.pid)).toBe(false);
  }, 150_000);

  it('exits non-zero with a clear message when the postmaster cannot be restarted', async () => {
    const { service, dataDir } = await startEmbeddedService();
    const killed = postmaster(dataDir);
    const started = processTree(service.child.pid!);

    // A data directory PostgreSQL refuses to use (group and others may write) makes every restart fail.
    await chmod(path.join(dataDir, 'pg'), 0o777);
    process.kill(killed.pid, 'SIGKILL');

    // Five attempts, 0.5 s doubling to 8 s: about 16 s.
    const exit = await waitFor(() => (service.child.exitCode === null ? undefined : { code: service.child.exitCode }), 45_000, 'exit');
    expect(exit.code).toBe(1);
    const lines = logLines(service);
    expect(lines.filter((l) => l.level >= 50 && /embedded PostgreSQL exited/.test(l.msg))).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'embedded PostgreSQL did not restart')).toHaveLength(5);
    const fatal = lines.find((l) => l.level === 60);
    expect(fatal?.msg).toMatch(/embedded PostgreSQL is gone/);
    expect(fatal?.err).toMatch(/did not restart after 5 attempts: .*invalid permissions/);
    await waitFor(() => started.every((pid) => !isAlive(pid)), 6_000, 'the worker and the old server processes gone');
  }, 150_000);
});

describe('stopping the whole process group', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('stops web, worker and PostgreSQL within 6 s when %s reaches every process at once, under load', async (signal) => {
    const { service, dataDir, apiKey } = await startEmbeddedService({ detached: true });
    const processes = processTree(service.child.pid!);
    expect(processes).toContain(postmaster(dataDir).pid);
    expect(processes.length).toBeGreaterThanOrEqual(4);

    // Clients on kept-alive connections keep sending, as a load balancer does until it notices.
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ code: 'GROUP-STOP', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } });
    expect((await fetch(`${service.baseUrl}/api/v1/vouchers`, { method: 'POST', headers, body })).status).toBe(201);
    const order = JSON.stringify({ order: { amount: 1000, currency: 'EUR' } });
    let loading = true;
    const clients = Array.from({ length: 8 }, async (_, i) => {
      while (loading) {
        const request = i % 2
          ? fetch(`${service.baseUrl}/ready`)
          : fetch(`${service.baseUrl}/api/v1/vouchers/GROUP-STOP/redemption`, { method: 'POST', headers, body: order });
        await request.then((r) => r.arrayBuffer(), () => new Promise((r) => setTimeout(r, 50)));
      }
    });
    await new Promise((r) => setTimeout(r, 1_000));

    const exited = new Promise<number | null>((resolve) => service.child.once('exit', (code) => resolve(code)));
    const signalledAt = Date.now();
    process.kill(-service.child.pid!, signal);
    try {
      await waitFor(() => processes.every((pid) => !isAlive(pid)), 6_000, 'every process of the group gone');
    } finally {
      loading = false;
      await Promise.all(clients);
    }
    console.info(`process group stopped in ${Date.now() - signalledAt} ms after ${signal}`);
    expect(await exited).toBe(0);
  }, 120_000);
});
