import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { readMigrationFiles } from '../../src/platform/migrations.js';
import { packageVersion } from '../../src/platform/paths.js';
import { databaseCheck, migrationsCheck, workerCheck } from '../../src/http/readiness-checks.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let proxy: TcpProxy;
beforeAll(async () => {
  const files = await readMigrationFiles();
  const server = new URL(inject('serverUrl'));
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port) });
  service = await startTestService({
    pool: (db) => {
      // The app reaches PostgreSQL through a proxy the test can cut.
      const url = new URL(db.url);
      url.port = String(proxy.port);
      return createPool(url.toString(), { max: 5, log: createLogger('silent') });
    },
    readinessChecks: (pool) => ({ database: databaseCheck(pool), migrations: migrationsCheck(pool, files), worker: workerCheck(pool) }),
  });
}, 60_000);
afterAll(async () => {
  await service?.close();
  await proxy?.close();
});


async function ready() {
  const res = await fetch(`${service.baseUrl}/ready`);
  return { status: res.status, body: (await res.json()) as any };
}

describe('health', () => {
  it('answers liveness at /health and /api/v1/health with the version', async () => {
    for (const path of ['/health', '/api/v1/health']) {
      const res = await fetch(service.baseUrl + path);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok', version: packageVersion });
    }
  });
});

describe('readiness', () => {
  it('is 503 naming the worker while no worker beats, and 200 once one does', async () => {
    const before = await ready();
    expect(before.status).toBe(503);
    expect(before.body.failing).toEqual(['worker']);
    expect(before.body.checks.database.status).toBe('ok');
    await service.db.pool.query(`INSERT INTO worker_heartbeats (worker_id, pid, host) VALUES ('test-worker', 1, 'test')`);
    const after = await ready();
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ status: 'ready', checks: { database: { status: 'ok' }, migrations: { status: 'ok' }, worker: { status: 'ok' } } });
    const alias = await fetch(`${service.baseUrl}/api/v1/ready`);
    expect(alias.status).toBe(200);
  });

  it('turns 503 naming the database while it is unreachable, and recovers by itself', async () => {
    await service.db.pool.query(`UPDATE worker_heartbeats SET beat_at = now() + interval '1 hour'`);
    expect((await ready()).status).toBe(200);
    await proxy.cut();
    const down = await ready();
    expect(down.status).toBe(503);
    expect(down.body.failing).toContain('database');
    expect(down.body.checks.database.status).toBe('failing');
    expect(down.body.checks.database.detail).toBeTruthy();
    const api = await service.newWorkspace();
    const during = await api.api.get('/api/v1/workspace');
    expect(during.status).toBe(503);
    expect(during.body.code).toBe('service_unavailable');
    expect(during.headers.get('retry-after')).toBe('2');
    await proxy.restore();
    await expect.poll(async () => (await ready()).status, { timeout: 15_000, interval: 250 }).toBe(200);
  });
});
