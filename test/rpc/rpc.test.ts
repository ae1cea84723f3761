// The RPC face against a real service: same auth, scopes, validation, outputs and problems as REST; version handshake.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_VERSION_HEADER } from '../../src/client/version.js';
import { packageVersion } from '../../src/platform/paths.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startTestService();
  ({ key } = await service.newWorkspace());
});
afterAll(async () => service?.close());

function rpc(name: string, input?: unknown, options: { key?: string | null; headers?: Record<string, string> } = {}) {
  const auth: Record<string, string> = options.key === null ? {} : { authorization: `Bearer ${options.key ?? key}` };
  return service.api().request('POST', `/api/rpc/${name}`, {
    ...(input === undefined ? {} : { body: input }),
    headers: { ...auth, ...options.headers },
  });
}

describe('RPC happy path', () => {
  it('runs an operation by name with its merged input and answers exactly what REST answers', async () => {
    const created = await rpc('campaigns.create', { name: 'Spring', type: 'DISCOUNT_COUPONS', currency: 'EUR' });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-server-version')).toBe(packageVersion);
    const viaRpc = await rpc('campaigns.get', { id: created.body.id });
    const viaRest = await service.api(key).get(`/api/v1/campaigns/${created.body.id}`);
    expect(viaRpc.status).toBe(200);
    expect(viaRpc.body).toEqual(viaRest.body);

    // path + body fields in one object; query fields too (numbers as JSON numbers)
    await rpc('vouchers.create', { code: 'RPC-1', campaignId: created.body.id, discount: { type: 'AMOUNT', amountOff: 500 } });
    const updated = await rpc('vouchers.update', { code: 'RPC-1', active: false });
    expect(updated.status).toBe(200);
    expect(updated.body.active).toBe(false);
    const page = await rpc('vouchers.list', { campaignId: created.body.id, limit: 1 });
    expect(page.status).toBe(200);
    expect(page.body.data.map((v: any) => v.code)).toEqual(['RPC-1']);
    expect(await rpc('vouchers.delete', { code: 'RPC-1' })).toMatchObject({ status: 204, body: undefined });
  });

  it('describes the caller: server version, scopes and the operations the key may call', async () => {
    const { key: readKey } = await service.newWorkspace(['campaigns:read']);
    const res = await service.api(readKey).get('/api/rpc');
    expect(res.status).toBe(200);
    expect(res.body.version).toBe(packageVersion);
    expect(res.body.scopes).toEqual(['campaigns:read']);
    // Besides its scope's, anyone may call the operations of scope `none` (signing in, the session routes).
    const scoped = res.body.operations.filter((o: any) => o.scope !== 'none').map((o: any) => o.name).sort();
    expect(scoped).toEqual(['campaigns.get', 'campaigns.list', 'promotions.getTier', 'promotions.listTiers']);
  });

  it('is listed in the OpenAPI document with the operation names', async () => {
    const doc = (await service.api().get('/api/openapi.json')).body;
    const call = doc.paths['/api/rpc/{operation}'].post;
    const param = call.parameters.find((p: any) => p.name === 'operation');
    expect(param.schema.enum).toContain('vouchers.create');
    expect(call.parameters.some((p: any) => p.name === 'x-client-version')).toBe(true);
    expect(doc.paths['/api/rpc'].post.operationId).toBe('rpc.batch');
    expect(doc.paths['/api/mcp'].post).toBeDefined();
  });
});

describe('RPC errors', () => {
  it('answers problems like REST: unknown field, bad value, lookup, conflict', async () => {
    const typo = await rpc('campaigns.create', { name: 'x', type: 'DISCOUNT_COUPONS', currencyy: 'EUR' });
    expect(typo.status).toBe(400);
    expect(typo.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(typo.body).toMatchObject({ code: 'invalid_request', errors: [{ path: 'currencyy' }] });

    const bad = await rpc('vouchers.list', { limit: 1000 });
    expect(bad.body).toMatchObject({ status: 400, code: 'invalid_request', errors: [{ path: 'limit' }] });
    expect((await service.api(key).get('/api/v1/vouchers?limit=1000')).status).toBe(400);

    expect((await rpc('campaigns.get', { id: '0b6f4c1e-8d2a-4f57-9c55-7f0f2a1d9e31' })).body.code).toBe('not_found');
    await rpc('vouchers.create', { code: 'TWICE', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' });
    expect((await rpc('vouchers.create', { code: 'TWICE', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' })).body.code).toBe('conflict');
    expect((await rpc('campaigns.list', [1, 2])).body.code).toBe('invalid_request');
  });

  it('refuses unknown operations (404) and other methods (405)', async () => {
    const res = await rpc('nothing.here', {});
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    const get = await service.api(key).get('/api/rpc/campaigns.list');
    expect(get.status).toBe(405);
    expect(get.body.code).toBe('method_not_allowed');
  });

  it('refuses a missing key (401) and a missing scope (403) before looking at the input', async () => {
    expect((await rpc('campaigns.list', {}, { key: null })).status).toBe(401);
    const { key: readKey } = await service.newWorkspace(['campaigns:read']);
    const res = await rpc('campaigns.create', { nonsense: true }, { key: readKey });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });

  it('keeps workspaces apart: another workspace\'s id is 404', async () => {
    const other = await service.newWorkspace();
    const created = await rpc('campaigns.create', { name: 'Mine', type: 'PROMOTION' });
    expect((await rpc('campaigns.get', { id: created.body.id }, { key: other.key })).status).toBe(404);
  });

  it('never answers 5xx to arbitrary JSON inputs on any operation', async () => {
    const { operations } = await import('../../src/registry.js');
    const junk = [{}, { id: 1 }, { code: '' }, { limit: 'x', cursor: 'zzz' }, { name: 'n'.repeat(5000) }, { code: '\u0000' }, null, 'text', 42];
    for (const op of operations) {
      for (const input of junk) {
        const res = await rpc(op.name, input);
        expect(res.status, `${op.name} ${JSON.stringify(input)?.slice(0, 50)}`).toBeLessThan(500);
      }
    }
  });
});

describe('RPC batches', () => {
  const batch = (body: unknown, k = key) => service.api(k).post('/api/rpc', body);

  it('runs the calls in order, each with its own status and output or problem', async () => {
    const res = await batch({
      calls: [
        { operation: 'vouchers.create', input: { code: 'B-1', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' } },
        { operation: 'vouchers.create', input: { code: 'B-1', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1 }, currency: 'EUR' } },
        { operation: 'vouchers.get', input: { code: 'B-1' } },
        { operation: 'vouchers.list', input: { limit: 0 } },
        { operation: 'nothing.here' },
        { operation: 'vouchers.delete', input: { code: 'B-1' } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 409, 200, 400, 404, 204]);
    expect(res.body.results[1].problem).toMatchObject({ code: 'conflict' });
    expect(res.body.results[2].output).toMatchObject({ code: 'B-1' });
    expect(res.body.results[3].problem).toMatchObject({ code: 'invalid_request', errors: [{ path: 'limit' }] });
  });

  it('checks the scope of each call', async () => {
    const { key: readKey } = await service.newWorkspace(['campaigns:read']);
    const res = await batch({ calls: [{ operation: 'campaigns.list' }, { operation: 'campaigns.create', input: { name: 'x', type: 'PROMOTION' } }] }, readKey);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([200, 403]);
  });

  it('refuses a malformed batch as a whole', async () => {
    for (const body of [{}, { calls: [] }, { calls: [{ operation: 1 }] }, { calls: [{}], extra: true }, { calls: Array(1001).fill({ operation: 'campaigns.list' }) }]) {
      const res = await batch(body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(res.body.code).toBe('invalid_request');
    }
  });
});

describe('version handshake', () => {
  it('lets a client of the same major.minor through, whatever its patch', async () => {
    const [major, minor] = packageVersion.split('.');
    const res = await rpc('campaigns.list', {}, { headers: { [CLIENT_VERSION_HEADER]: `${major}.${minor}.999` } });
    expect(res.status).toBe(200);
  });

  it('refuses another major.minor with a version_mismatch problem naming both versions', async () => {
    const [major, minor] = packageVersion.split('.').map(Number);
    const res = await rpc('campaigns.list', {}, { headers: { [CLIENT_VERSION_HEADER]: `${major}.${minor! + 1}.0` } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('version_mismatch');
    expect(res.body.detail).toContain(packageVersion);
    expect(res.body.detail).toContain(`${major}.${minor! + 1}.0`);
    const garbage = await rpc('campaigns.list', {}, { headers: { [CLIENT_VERSION_HEADER]: 'latest' } });
    expect(garbage.body.code).toBe('invalid_request');
  });
});
