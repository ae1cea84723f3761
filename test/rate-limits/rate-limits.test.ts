// Rate limits through the real service: token buckets per API key (its own limit, the workspace default, the server
// default from RATE_LIMIT_*), per client address for requests without a valid key; the IETF RateLimit fields on every
// face (REST, RPC, MCP, the hot path); 429 `rate_limited` with Retry-After, never a 5xx, under a race.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, ApiResponse } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;

// The server defaults this file runs under, read by the composition from the environment as main.ts's config does:
// keys 1 request per second with a burst of 20, addresses (requests without a valid key) 1 per second, burst 3.
const ENVIRONMENT = { RATE_LIMIT_PER_KEY: '1', RATE_LIMIT_BURST_PER_KEY: '20', RATE_LIMIT_PER_ADDRESS: '1', RATE_LIMIT_BURST_PER_ADDRESS: '3' };

beforeAll(async () => {
  const saved = { ...process.env };
  Object.assign(process.env, ENVIRONMENT);
  try {
    service = await startTestService();
  } finally {
    for (const name of Object.keys(ENVIRONMENT)) if (saved[name] === undefined) delete process.env[name];
  }
});
afterAll(async () => service?.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const statuses = (answers: ApiResponse[]) => answers.map((a) => a.status).sort();

/** A workspace whose first key (server default limit) made a second key with the given limit and scopes. */
async function keyWithLimit(rateLimit: { requestsPerSecond: number; burst?: number } | undefined) {
  const workspace = await service.newWorkspace();
  const created = await workspace.api.create('/api/v1/api-keys', { name: 'limited', scopes: ['*'], ...(rateLimit ? { rateLimit } : {}) });
  return { ...workspace, limited: service.api(created.key as string), id: created.id as string, created };
}

async function createVoucher(api: ApiClient) {
  const code = `RL-${randomUUID().slice(0, 8)}`;
  await api.create('/api/v1/vouchers', { code, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
  return code;
}

const validateBody = { order: { amount: 1_000, currency: 'EUR' } };

describe('rate limits: happy path', () => {
  it('lets a key burst, then answers 429 rate_limited with Retry-After and the fields, and refills', async () => {
    const { limited, created } = await keyWithLimit({ requestsPerSecond: 1, burst: 4 });
    expect(created.rateLimit).toEqual({ requestsPerSecond: 1, burst: 4 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => limited.get('/api/v1/workspace')));
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 429, 429]);
    for (const ok of answers.filter((a) => a.status === 200)) {
      expect(ok.headers.get('ratelimit-policy')).toBe('"key";q=4;w=4');
      expect(ok.headers.get('ratelimit')).toMatch(/^"key";r=[0-3];t=[1-4]$/);
    }
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ status: 429, code: 'rate_limited', title: 'Too many requests' });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit')).toBe('"key";r=0;t=1');
    expect(refused.headers.get('ratelimit-policy')).toBe('"key";q=4;w=4');

    await sleep(1_100); // one token back at 1 per second
    expect((await limited.get('/api/v1/workspace')).status).toBe(200);
    expect((await limited.get('/api/v1/workspace')).status).toBe(429);
  });

  it('reports the fields on every authenticated answer: REST (also a 404), RPC, MCP and the hot path', async () => {
    const { limited } = await keyWithLimit({ requestsPerSecond: 1, burst: 100 });
    const code = await createVoucher(limited);
    const rest = await limited.get('/api/v1/workspace');
    const missing = await limited.get(`/api/v1/campaigns/${randomUUID()}`);
    const rpc = await limited.post('/api/rpc/workspaces.current', {});
    const batch = await limited.post('/api/rpc', { calls: [{ operation: 'workspaces.current' }] });
    const hot = await limited.post(`/api/v1/vouchers/${code}/validate`, validateBody);
    const hotMissing = await limited.post('/api/v1/vouchers/NO-SUCH-CODE/redemption', { order: { amount: 'x' } });
    const mcp = await limited.request('POST', '/api/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      headers: { accept: 'application/json, text/event-stream' },
    });
    const answers = { rest, missing, rpc, batch, hot, hotMissing, mcp };
    expect(Object.fromEntries(Object.entries(answers).map(([face, a]) => [face, a.status]))).toEqual({
      rest: 200,
      missing: 404,
      rpc: 200,
      batch: 200,
      hot: 200,
      hotMissing: 400,
      mcp: 200,
    });
    expect(hot.body.valid).toBe(true);
    const remaining: number[] = [];
    for (const [face, answer] of Object.entries(answers)) {
      expect(answer.headers.get('ratelimit-policy'), face).toBe('"key";q=100;w=100');
      const field = answer.headers.get('ratelimit') ?? '';
      expect(field, face).toMatch(/^"key";r=\d+;t=\d+$/);
      remaining.push(Number(/r=(\d+)/.exec(field)![1]));
    }
    // One bucket across the faces: each answer leaves no more than the one before (one token drips back per second).
    for (let i = 1; i < remaining.length; i++) expect(remaining[i]!).toBeLessThanOrEqual(remaining[i - 1]!);
    expect(remaining.at(-1)!).toBeLessThan(remaining[0]!);
  });

  it('keeps two keys independent: one exhausted, the other still served', async () => {
    const { api, limited } = await keyWithLimit({ requestsPerSecond: 1, burst: 2 });
    const other = service.api((await api.create('/api/v1/api-keys', { name: 'other', scopes: ['*'], rateLimit: { requestsPerSecond: 1, burst: 2 } })).key);
    expect(statuses(await Promise.all([1, 2, 3].map(() => limited.get('/api/v1/workspace'))))).toEqual([200, 200, 429]);
    expect((await other.get('/api/v1/workspace')).status).toBe(200);
    expect((await other.get('/api/v1/workspace')).status).toBe(200);
    expect((await other.get('/api/v1/workspace')).status).toBe(429);
  });

  it('applies the server default (RATE_LIMIT_PER_KEY, RATE_LIMIT_BURST_PER_KEY) to keys without a limit', async () => {
    const { limited, created } = await keyWithLimit(undefined);
    expect(created.rateLimit).toBeNull();
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 24 }, () => limited.get('/api/v1/workspace')));
    const seconds = Math.ceil((Date.now() - started) / 1000);
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"key";q=20;w=20');
    // 20 at once, and no more than dripped in at 1 per second while the race ran.
    const ok = answers.filter((a) => a.status === 200).length;
    expect(ok).toBeGreaterThanOrEqual(20);
    expect(ok).toBeLessThanOrEqual(20 + seconds);
    expect(answers.filter((a) => a.status === 429).length).toBe(24 - ok);
  });

  it('changes a key\'s limit with PATCH /api-keys/{id}; it applies within a second, and null returns it to the default', async () => {
    const { api, limited, id } = await keyWithLimit({ requestsPerSecond: 1, burst: 1 });
    expect((await limited.get('/api/v1/workspace')).status).toBe(200);
    expect((await limited.get('/api/v1/workspace')).status).toBe(429);
    const patched = await api.patch(`/api/v1/api-keys/${id}`, { rateLimit: { requestsPerSecond: 500, burst: 1000 } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, name: 'limited', rateLimit: { requestsPerSecond: 500, burst: 1000 } });
    const started = Date.now();
    await expect.poll(async () => (await limited.get('/api/v1/workspace')).status, { timeout: 1_000, interval: 20 }).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await limited.get('/api/v1/workspace')).headers.get('ratelimit-policy')).toBe('"key";q=1000;w=2');
    const listed = (await api.get('/api/v1/api-keys')).body.data.find((k: { id: string }) => k.id === id);
    expect(listed.rateLimit).toEqual({ requestsPerSecond: 500, burst: 1000 });

    const renamed = await api.patch(`/api/v1/api-keys/${id}`, { name: 'renamed' });
    expect(renamed.body).toMatchObject({ name: 'renamed', rateLimit: { requestsPerSecond: 500, burst: 1000 } });
    const cleared = await api.patch(`/api/v1/api-keys/${id}`, { rateLimit: null });
    expect(cleared.body.rateLimit).toBeNull();
    await expect.poll(async () => (await limited.get('/api/v1/workspace')).headers.get('ratelimit-policy'), { timeout: 1_000, interval: 20 }).toBe('"key";q=20;w=20');
  });

  it('gives keys without a limit of their own the workspace default from PATCH /workspace; a key\'s own limit still wins', async () => {
    const { api, limited } = await keyWithLimit(undefined);
    const own = service.api((await api.create('/api/v1/api-keys', { name: 'own', scopes: ['*'], rateLimit: { requestsPerSecond: 200 } })).key);
    expect((await limited.get('/api/v1/workspace')).headers.get('ratelimit-policy')).toBe('"key";q=20;w=20');
    const patched = await own.patch('/api/v1/workspace', { rateLimit: { requestsPerSecond: 1, burst: 3 } });
    expect(patched.status).toBe(200);
    expect(patched.body.rateLimit).toEqual({ requestsPerSecond: 1, burst: 3 });
    expect((await own.get('/api/v1/workspace')).body.rateLimit).toEqual({ requestsPerSecond: 1, burst: 3 });
    await expect.poll(async () => (await limited.get('/api/v1/workspace')).headers.get('ratelimit-policy'), { timeout: 1_000, interval: 20 }).toBe('"key";q=3;w=3');
    await sleep(1_100); // full again (its burst of 3)
    expect(statuses(await Promise.all([1, 2, 3, 4].map(() => limited.get('/api/v1/workspace'))))).toEqual([200, 200, 200, 429]);
    expect((await own.get('/api/v1/workspace')).headers.get('ratelimit-policy')).toBe('"key";q=200;w=1');
    // The workspace's first key, made before the default, follows it too (it has no limit of its own).
    expect((await api.get('/api/v1/workspace')).headers.get('ratelimit-policy')).toBe('"key";q=3;w=3');
    await own.patch('/api/v1/workspace', { rateLimit: null });
    await expect.poll(async () => (await limited.get('/api/v1/workspace')).headers.get('ratelimit-policy'), { timeout: 1_000, interval: 20 }).toBe('"key";q=20;w=20');
  });

  it('charges an RPC batch one request per call', async () => {
    const { limited } = await keyWithLimit({ requestsPerSecond: 1, burst: 10 });
    const calls = (n: number) => ({ calls: Array.from({ length: n }, () => ({ operation: 'workspaces.current' })) });
    const first = await limited.post('/api/rpc', calls(8));
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toMatch(/^"key";r=2;t=\d+$/);
    expect((await limited.post('/api/rpc', calls(5))).status).toBe(429);
  });
});

describe('rate limits: security', () => {
  it('answers a race of 200 requests over REST, RPC and the hot path with exactly the burst served and 429 for the rest, never a 5xx', async () => {
    const { limited, api } = await keyWithLimit({ requestsPerSecond: 1, burst: 50 });
    const code = await createVoucher(api);
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        i % 3 === 0
          ? limited.post(`/api/v1/vouchers/${code}/validate`, validateBody)
          : i % 3 === 1
            ? limited.get('/api/v1/workspace')
            : limited.post('/api/rpc/workspaces.current', {}),
      ),
    );
    const seconds = Math.ceil((Date.now() - started) / 1000);
    expect([...new Set(answers.map((a) => a.status))].sort()).toEqual([200, 429]);
    const served = answers.filter((a) => a.status === 200).length;
    expect(served).toBeGreaterThanOrEqual(50);
    expect(served).toBeLessThanOrEqual(50 + seconds);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(refused.body.code).toBe('rate_limited');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('refuses malformed limits with 400 naming the field, and a foreign key with 404', async () => {
    const { limited: api, id } = await keyWithLimit({ requestsPerSecond: 1_000 });
    for (const rateLimit of [{ requestsPerSecond: 0 }, { requestsPerSecond: 1.5 }, { requestsPerSecond: 2_000_000 }, { requestsPerSecond: 5, burst: 0 }, { burst: 5 }, { requestsPerSecond: 5, extra: 1 }, 'fast']) {
      const res = await api.post('/api/v1/api-keys', { name: 'bad', scopes: ['*'], rateLimit });
      expect({ rateLimit, status: res.status }).toEqual({ rateLimit, status: 400 });
      expect(JSON.stringify(res.body.errors)).toContain('rateLimit');
      expect((await api.patch(`/api/v1/api-keys/${id}`, { rateLimit })).status).toBe(400);
      expect((await api.patch('/api/v1/workspace', { rateLimit })).status).toBe(400);
    }
    const stranger = await service.newWorkspace();
    expect((await stranger.api.patch(`/api/v1/api-keys/${id}`, { rateLimit: null })).status).toBe(404);
    expect((await api.patch(`/api/v1/api-keys/${randomUUID()}`, { name: 'x' })).status).toBe(404);
    const reader = await service.newWorkspace(['api-keys:read']);
    expect((await reader.api.patch(`/api/v1/api-keys/${id}`, { name: 'x' })).status).toBe(403);
  });
});

// Last: it leaves this test client's address (127.0.0.1) blocked for new keys for a moment.
describe('rate limits: clients without a valid key', () => {
  it('limits requests without a valid key per client address, before any key is looked up', async () => {
    const { key: known } = await service.newWorkspace();
    expect((await service.api(known).get('/api/v1/workspace')).status).toBe(200); // verified moments ago: recognised
    const { key: unused } = await service.newWorkspace();
    const guesses = [undefined, 'nonsense', `service_${'x'.repeat(12)}_${'y'.repeat(40)}`];
    const answers: ApiResponse[] = [];
    for (const guess of guesses) answers.push(await service.api(guess).get('/api/v1/workspace'));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401]);
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"address";q=3;w=3');
    expect(answers.map((a) => /r=(\d+)/.exec(a.headers.get('ratelimit') ?? '')?.[1])).toEqual(['2', '1', '0']);

    const refused = await service.api('nonsense').post('/api/v1/vouchers/ANY/validate', validateBody);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited' });
    expect(refused.headers.get('retry-after')).toBe('1');
    // A valid key not seen lately is refused too: a correct guess looks like any other while the address is blocked.
    expect((await service.api(unused).get('/api/v1/workspace')).status).toBe(429);
    // A key in use from the same address keeps working.
    expect((await service.api(known).get('/api/v1/workspace')).status).toBe(200);

    await sleep(1_100); // one token back
    expect((await service.api(unused).get('/api/v1/workspace')).status).toBe(200);
    expect((await service.api('nonsense').get('/api/v1/workspace')).status).toBe(401);
  });
});
