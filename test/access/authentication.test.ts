import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/contract/operation.js';
import { NO_SCOPE } from '../../src/contract/scopes.js';
import { operations } from '../../src/registry.js';
import { runKeysRevoke } from '../../src/cli/admin-commands.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/platform/logger.js';
import { startTestService, type TestService } from '../support/service.js';
import type { ApiClient } from '../support/api-client.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

function concretePath(op: Operation): string {
  return '/api/v1' + op.path.replace(/\{id\}/g, randomUUID()).replace(/\{[A-Za-z]+\}/g, 'NO-SUCH-CODE');
}

function call(api: ApiClient, op: Operation) {
  return api.request(op.method.toUpperCase(), concretePath(op), op.body ? { body: {} } : {});
}

describe('authentication', () => {
  it('answers 401 problem+json without a key, with a malformed key, an unknown key or a wrong secret', async () => {
    const { key } = await service.newWorkspace();
    const [, prefix] = key.split('_');
    const wrongSecret = `service_${prefix}_${'A'.repeat(40)}`;
    for (const candidate of [undefined, 'nonsense', `service_${'x'.repeat(12)}_${'y'.repeat(40)}`, wrongSecret]) {
      const res = await service.api(candidate).get('/api/v1/api-keys');
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 401, code: 'unauthorized', title: expect.any(String), type: expect.any(String) });
    }
    const basic = await service.api().request('GET', '/api/v1/api-keys', { headers: { authorization: `Basic ${key}` } });
    expect(basic.status).toBe(401);
  });

  it('stops accepting a key once it is revoked', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/api-keys', { name: 'short-lived', scopes: ['campaigns:read'] });
    const shortLived = service.api(created.body.key);
    expect((await shortLived.get('/api/v1/workspace')).status).toBe(403);
    expect((await api.delete(`/api/v1/api-keys/${created.body.id}`)).status).toBe(204);
    expect((await shortLived.get('/api/v1/workspace')).status).toBe(401);
    expect((await api.delete(`/api/v1/api-keys/${created.body.id}`)).status).toBe(404);
  });

  it('serves keys from the cache while its listener runs, and forgets one revoked by another process at once', async () => {
    // The composition starts the revocation listener as in production, so verified keys are cached.
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/api-keys', { name: 'cached', scopes: ['campaigns:read'] });
    const cached = service.api(created.body.key);
    expect((await cached.get('/api/v1/campaigns')).status).toBe(200);
    // While cached, a use does not read api_keys: change its scopes behind the cache's back and the cached ones still apply.
    await service.pool.query('UPDATE api_keys SET scopes = $2 WHERE id = $1', [created.body.id, ['vouchers:read']]);
    expect((await cached.get('/api/v1/campaigns')).status).toBe(200);
    // Revoked by the CLI, on its own connections: NOTIFY api_keys_changed empties every process's cache.
    await runKeysRevoke(loadConfig({ DATABASE_URL: service.db.url }), createLogger('silent'), { id: created.body.id });
    await expect.poll(async () => (await cached.get('/api/v1/campaigns')).status, { timeout: 2_000, interval: 20 }).toBe(401);
  });

  it('records when a key was last used', async () => {
    const { api, key } = await service.newWorkspace();
    const prefix = key.split('_')[1];
    const before = await service.pool.query('SELECT last_used_at FROM api_keys WHERE prefix = $1', [prefix]);
    expect(before.rows[0]!.last_used_at).toBeNull();
    await api.get('/api/v1/workspace');
    await expect
      .poll(async () => (await service.pool.query('SELECT last_used_at FROM api_keys WHERE prefix = $1', [prefix])).rows[0]!.last_used_at)
      .toBeInstanceOf(Date);
  });

  it('stores only a hash of the secret', async () => {
    const { key } = await service.newWorkspace();
    const [, prefix, secret] = key.split('_');
    const { rows } = await service.pool.query('SELECT * FROM api_keys WHERE prefix = $1', [prefix]);
    expect(JSON.stringify(rows[0])).not.toContain(secret);
    expect(Buffer.isBuffer(rows[0]!.secret_hash)).toBe(true);
  });
});

describe('scopes', () => {
  it('refuses every operation to a key without its scope (403), before looking at the input', async () => {
    const { key } = await service.newWorkspace(['audit:read']);
    const api = service.api(key);
    // Operations of scope `none` (signing in, accepting an invitation, the session routes) need no key scope.
    for (const op of operations.filter((o) => o.scope !== 'audit:read' && o.scope !== NO_SCOPE)) {
      const res = await call(api, op);
      expect({ op: op.name, status: res.status, code: res.body?.code }).toEqual({ op: op.name, status: 403, code: 'forbidden' });
    }
  });

  it('lets a key with exactly the scope through, and a write scope includes its read', async () => {
    for (const op of operations.filter((o) => o.scope !== 'workspaces:admin' && o.scope !== NO_SCOPE)) {
      const granting = [op.scope, op.scope.replace(/:read$/, ':write')];
      for (const scope of new Set(granting)) {
        const { key } = await service.newWorkspace([scope]);
        const res = await call(service.api(key), op);
        expect({ op: op.name, scope, status: res.status }).not.toMatchObject({ status: expect.toBeOneOf([401, 403]) });
      }
    }
    // About 450 calls, each the first of its route in this service: the request validator compiles a route's schemas
    // on its first request (15 s alone; twice that with three test files at once; past 120 s on a machine starved to
    // a fifth of its speed).
  }, 300_000);

  it('keeps workspaces:admin away from `*` keys; CLI-style admin keys hold it', async () => {
    const { api } = await service.newWorkspace(['*']);
    const refused = await api.post('/api/v1/workspaces', { name: 'nope' });
    expect(refused.status).toBe(403);
    const admin = await service.adminApi();
    const created = await admin.post('/api/v1/workspaces', { name: 'Acme' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Acme', id: expect.any(String), apiKey: expect.stringMatching(/^service_/) });
    const own = await service.api(created.body.apiKey).get('/api/v1/workspace');
    expect(own.body).toMatchObject({ id: created.body.id, name: 'Acme' });
  });

  it('does not let a key grant scopes it does not hold', async () => {
    const { key } = await service.newWorkspace(['api-keys:write']);
    const api = service.api(key);
    const escalate = await api.post('/api/v1/api-keys', { name: 'x', scopes: ['*'] });
    expect(escalate.status).toBe(403);
    const same = await api.post('/api/v1/api-keys', { name: 'x', scopes: ['api-keys:read'] });
    expect(same.status).toBe(201);
  });
});

describe('workspace isolation', () => {
  it("answers 404 for another workspace's API key exactly as for a missing one", async () => {
    const a = await service.newWorkspace();
    const b = await service.newWorkspace();
    const bKey = await b.api.post('/api/v1/api-keys', { name: 'b', scopes: ['campaigns:read'] });
    const foreign = await a.api.delete(`/api/v1/api-keys/${bKey.body.id}`);
    const missing = await a.api.delete(`/api/v1/api-keys/${randomUUID()}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    const listA = await a.api.get('/api/v1/api-keys');
    expect(listA.body.data.map((k: { id: string }) => k.id)).not.toContain(bKey.body.id);
    expect((await service.api(bKey.body.key).get('/api/v1/campaigns')).status).not.toBe(401);
  });
});
