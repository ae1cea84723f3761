import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { projectRoot } from '../../src/platform/paths.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { baseEnv, freePort, listensOn, spawnService } from '../support/processes.js';

const run = promisify(execFile);
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function isListening(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/health`).then(() => true, () => false);
}

describe('the service process on an external PostgreSQL (DATABASE_URL)', () => {
  it('starts web and worker, seeds BOOTSTRAP_API_KEY, keeps secrets out of logs, and stops cleanly on SIGINT', async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const [port, workerPort] = [await freePort(), await freePort()];
    const bootstrap = generateApiKey();
    const service = spawnService(
      baseEnv({ DATABASE_URL: db.url, PORT: String(port), WORKER_HEALTH_PORT: String(workerPort), BOOTSTRAP_API_KEY: bootstrap.key }),
      port,
    );
    cleanups.push(() => service.stop('SIGKILL'));
    await service.waitForReady();

    const ready = (await (await fetch(`${service.baseUrl}/ready`)).json()) as any;
    expect(ready.checks).toMatchObject({ database: { status: 'ok' }, migrations: { status: 'ok' }, worker: { status: 'ok' } });
    expect((await fetch(`http://127.0.0.1:${workerPort}/health`)).status).toBe(200);

    const headers = { authorization: `Bearer ${bootstrap.key}`, 'content-type': 'application/json' };
    const created = await fetch(`${service.baseUrl}/api/v1/workspaces`, { method: 'POST', headers, body: JSON.stringify({ name: 'Acme' }) });
    expect(created.status).toBe(201);
    const { apiKey } = (await created.json()) as { apiKey: string };
    expect((await fetch(`${service.baseUrl}/api/v1/api-keys`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
    expect((await fetch(`${service.baseUrl}/api/v1/api-keys`, { headers: { authorization: `Bearer ${apiKey}x` } })).status).toBe(401);

    const exit = await service.stop('SIGINT');
    expect(exit.code).toBe(0);
    expect(await isListening(workerPort)).toBe(false);
    const logs = service.output();
    expect(logs).toContain('"msg":"request completed"');
    expect(logs).not.toContain(bootstrap.secret);
    expect(logs).not.toContain(apiKey.split('_')[2]);
    expect(logs.toLowerCase()).not.toContain('bearer');
  });
});

describe('waiting for a service to be ready', () => {
  it('does not take another process answering on its port for the service (a port taken between freePort and bind)', async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const port = await freePort();
    // Another test's service, as it were, on the port first: its /ready answers 200.
    const other = spawn(process.execPath, ['-e', `require('node:http').createServer((q, r) => r.end('{}')).listen(${port}, '127.0.0.1', () => process.send('up'))`], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    cleanups.push(async () => other.kill('SIGKILL'));
    await once(other, 'message');
    expect(listensOn(other.pid!, port)).toBe(true);
    const sibling = spawn('sleep', ['30'], { stdio: 'ignore' });
    cleanups.push(async () => sibling.kill('SIGKILL'));
    expect(listensOn(sibling.pid!, port)).toBe(false);
    expect((await fetch(`http://127.0.0.1:${port}/ready`)).status).toBe(200);
    const service = spawnService(baseEnv({ DATABASE_URL: db.url, PORT: String(port), WORKER_HEALTH_PORT: String(await freePort()) }), port);
    cleanups.push(() => service.stop('SIGKILL'));
    // Not ready on the other's answer: the service cannot bind its port, exits, and says why.
    await expect(service.waitForReady(60_000)).rejects.toThrow(/service exited[\s\S]*EADDRINUSE/);
  });
});

describe('the service process on the embedded PostgreSQL', () => {
  it('boots its own database under DATA_DIR, tells how to get a key, and stops it on SIGINT', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'promotions-data-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const [port, workerPort] = [await freePort(), await freePort()];
    const env = baseEnv({ DATA_DIR: dataDir, PORT: String(port), WORKER_HEALTH_PORT: String(workerPort) });
    const first = spawnService(env, port);
    cleanups.push(() => first.stop('SIGKILL'));
    await first.waitForReady(90_000);
    expect(first.output()).toContain('No API key exists yet');

    // The CLI joins the running embedded database and prints a key once.
    const cli = await run(process.execPath, [path.join(projectRoot, 'dist/src/cli/index.js'), 'keys', 'create', '--name', 'admin'], { env });
    const { key } = JSON.parse(cli.stdout);
    const auth = { authorization: `Bearer ${key}` };
    expect((await fetch(`${first.baseUrl}/api/v1/workspace`, { headers: auth })).status).toBe(200);
    const cliWorkspace = await run(process.execPath, [path.join(projectRoot, 'dist/src/cli/index.js'), 'workspaces', 'create', '--name', 'Acme'], { env });
    const acme = JSON.parse(cliWorkspace.stdout);
    const acmeView = await fetch(`${first.baseUrl}/api/v1/workspace`, { headers: { authorization: `Bearer ${acme.apiKey}` } });
    expect(await acmeView.json()).toMatchObject({ id: acme.id, name: 'Acme' });

    expect((await first.stop('SIGINT')).code).toBe(0);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

    // Data survives a restart, and the embedded server reuses its port.
    const second = spawnService(env, port);
    cleanups.push(() => second.stop('SIGKILL'));
    await second.waitForReady(90_000);
    expect(second.output()).not.toContain('No API key exists yet');
    expect((await fetch(`${second.baseUrl}/api/v1/workspace`, { headers: auth })).status).toBe(200);
    expect((await second.stop('SIGTERM')).code).toBe(0);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 180_000);

  it('says why when its embedded PostgreSQL cannot start: the port asked for is in use', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'promotions-data-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const [port, workerPort, pgPort] = [await freePort(), await freePort(), await freePort()];
    const holder = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${pgPort}, '127.0.0.1', () => process.send('up'))`], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    cleanups.push(async () => holder.kill('SIGKILL'));
    await once(holder, 'message');
    const service = spawnService(baseEnv({ DATA_DIR: dataDir, PORT: String(port), WORKER_HEALTH_PORT: String(workerPort), EMBEDDED_PG_PORT: String(pgPort) }), port);
    cleanups.push(() => service.stop('SIGKILL'));
    const [code] = (await once(service.child, 'exit')) as [number | null];
    expect(code, service.output()).toBe(1);
    expect(service.output()).toContain(`the embedded PostgreSQL did not start: 127.0.0.1:${pgPort} is in use by another process`);
  }, 180_000);
});
