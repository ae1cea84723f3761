// GET /audit-log: entries newest first with every filter, keyset pagination stable under inserts, 400s for bad
// input, the audit:read scope, workspace isolation, and entries that nothing but the retention job can touch.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/registry.js';
import { insertAuditEntries, pruneExpiredAuditEntries } from '../../src/domains/audit/index.js';
import { recordEvents } from '../../src/domains/events/index.js';
import type { ApiClient } from '../support/api-client.js';
import { seedAuditEntries, seedAuditEntry } from '../support/audit-entries.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

const LIST = '/api/v1/audit-log';
const MINUTE = 60_000;
const ago = (ms: number) => new Date(Date.now() - ms);
const ids = (body: { data: Array<{ id: string }> }) => body.data.map((e) => e.id);

async function list(api: ApiClient, query = ''): Promise<{ data: Array<{ id: string } & Record<string, any>>; next?: string; prev?: string }> {
  const res = await api.get(`${LIST}${query ? `?${query}` : ''}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('audit log: happy path', () => {
  it('lists entries newest first, with every field and without the absent ones', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const actor = { type: 'staff_user' as const, id: randomUUID(), label: 'ada@example.com' };
    const resourceId = randomUUID();
    const older = await seedAuditEntry(service.pool, workspaceId, {
      operation: 'campaigns.update',
      resourceType: 'campaign',
      resourceId,
      actor,
      changes: { before: { name: 'Old' }, after: { name: 'New' } },
      requestId: 'req-older',
      ip: '203.0.113.7',
      userAgent: 'dashboard/1.0',
      createdAt: new Date('2026-01-02T10:00:00.000Z'),
    });
    const newer = await seedAuditEntry(service.pool, workspaceId, {
      operation: 'webhooks.delete',
      resourceType: 'webhook_endpoint',
      resourceId: null,
      actor: { type: 'system', id: 'system', label: 'system' },
      requestId: 'req-newer',
      createdAt: new Date('2026-01-02T10:00:01.000Z'),
    });

    const page = await list(api);
    expect(page).toEqual({
      data: [
        {
          id: newer,
          createdAt: '2026-01-02T10:00:01.000Z',
          actor: { type: 'system', id: 'system', label: 'system' },
          operation: 'webhooks.delete',
          resourceType: 'webhook_endpoint',
          requestId: 'req-newer',
        },
        {
          id: older,
          createdAt: '2026-01-02T10:00:00.000Z',
          actor,
          operation: 'campaigns.update',
          resourceType: 'campaign',
          resourceId,
          changes: { before: { name: 'Old' }, after: { name: 'New' } },
          requestId: 'req-older',
          ip: '203.0.113.7',
          userAgent: 'dashboard/1.0',
        },
      ],
    });
  });

  it('records a mutation made through the API: its operation, resource, API key actor and X-Request-Id', async () => {
    const { api, key } = await service.newWorkspace();
    const created = await api.request('POST', '/api/v1/campaigns', {
      body: { name: 'Audited sale', type: 'DISCOUNT_COUPONS' },
      headers: { 'user-agent': 'audit-test/1.0' },
    });
    expect(created.status).toBe(201);
    const prefix = key.split('_')[1]!;
    const { rows } = await service.pool.query<{ id: string; name: string }>('SELECT id, name FROM api_keys WHERE prefix = $1', [prefix]);

    const page = await list(api, `resourceId=${created.body.id}`);
    expect(page.data).toHaveLength(1);
    expect(page.data[0]).toMatchObject({
      operation: 'campaigns.create',
      resourceId: created.body.id,
      actor: { type: 'api_key', id: rows[0]!.id, label: `${rows[0]!.name} (${prefix})` },
      changes: { after: { name: 'Audited sale' } },
      requestId: created.headers.get('x-request-id'),
      ip: expect.stringContaining('127.0.0.1'),
      userAgent: 'audit-test/1.0',
    });
    expect(JSON.stringify(page.data[0])).not.toContain(key.split('_')[2]!);
  });

  describe('filters', () => {
    let api: ApiClient;
    const entry: Record<string, string> = {};
    const key = { type: 'api_key' as const, id: randomUUID(), label: 'checkout (abcdefghijkl)' };
    const staff = { type: 'staff_user' as const, id: randomUUID(), label: 'ada@example.com' };
    const campaignId = randomUUID();
    const voucherId = randomUUID();

    beforeAll(async () => {
      const workspace = await service.newWorkspace();
      api = workspace.api;
      const seed = (name: string, at: number, fields: Parameters<typeof seedAuditEntry>[2]) =>
        seedAuditEntry(service.pool, workspace.workspaceId, { ...fields, createdAt: new Date(Date.UTC(2026, 0, 1, 12, 0, at)) }).then((id) => {
          entry[name] = id;
        });
      await seed('createCampaign', 0, { operation: 'campaigns.create', resourceType: 'campaign', resourceId: campaignId, actor: key });
      await seed('updateCampaign', 1, { operation: 'campaigns.update', resourceType: 'campaign', resourceId: campaignId, actor: staff });
      await seed('createVoucher', 2, { operation: 'vouchers.create', resourceType: 'voucher', resourceId: voucherId, actor: key });
      await seed('rollback', 3, { operation: 'redemptions.rollback', resourceType: 'redemption', actor: { type: 'system', id: 'system', label: 'system' } });
      await seed('updateVoucher', 4, { operation: 'vouchers.update', resourceType: 'voucher', resourceId: voucherId, actor: staff });
    });

    it.each([
      ['operation=campaigns.update', ['updateCampaign']],
      ['resourceType=voucher', ['updateVoucher', 'createVoucher']],
      ['resourceId={campaignId}', ['updateCampaign', 'createCampaign']],
      ['actorType=staff_user', ['updateVoucher', 'updateCampaign']],
      ['actorType=system', ['rollback']],
      ['actorId={staffId}', ['updateVoucher', 'updateCampaign']],
      ['from=2026-01-01T12:00:02.000Z', ['updateVoucher', 'rollback', 'createVoucher']],
      ['to=2026-01-01T12:00:02.000Z', ['updateCampaign', 'createCampaign']],
      ['from=2026-01-01T12:00:01.000Z&to=2026-01-01T12:00:03.000Z', ['createVoucher', 'updateCampaign']],
      ['from=2026-01-01T13:00:01%2B01:00&to=2026-01-01T12:00:01.000Z', []],
      ['actorType=api_key&resourceType=voucher', ['createVoucher']],
      ['operation=campaigns.delete', []],
    ])('%s', async (query, expected) => {
      const page = await list(api, query.replace('{campaignId}', campaignId).replace('{staffId}', staff.id));
      expect(ids(page)).toEqual(expected.map((name) => entry[name]));
      expect(page.next).toBeUndefined();
    });

    it('keeps the filters across pages', async () => {
      const first = await list(api, 'actorId=' + key.id + '&limit=1');
      expect(ids(first)).toEqual([entry.createVoucher]);
      const second = await list(api, `actorId=${key.id}&limit=1&cursor=${encodeURIComponent(first.next!)}`);
      expect(ids(second)).toEqual([entry.createCampaign]);
      expect(second.next).toBeUndefined();
      expect(second.prev).toEqual(expect.any(String));
    });
  });

  it('pages with next and prev, stable when new entries arrive between pages', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const [e1, e2, e3, e4, e5] = await seedAuditEntries(service.pool, workspaceId, 5, ago(MINUTE));

    const first = await list(api, 'limit=2');
    expect(ids(first)).toEqual([e5, e4]);
    expect(first.prev).toBeUndefined();
    const second = await list(api, `limit=2&cursor=${encodeURIComponent(first.next!)}`);
    expect(ids(second)).toEqual([e3, e2]);

    // Two mutations commit meanwhile: they are newer than every page already read, so nothing shifts.
    const trail = { workspaceId, operation: 'campaigns.create', actor: { type: 'api_key' as const, id: randomUUID(), label: 'k' }, requestId: 'req-new' };
    await insertAuditEntries(service.pool, [
      { trail, change: { resourceType: 'campaign', resourceId: randomUUID() } },
      { trail, change: { resourceType: 'campaign', resourceId: randomUUID() } },
    ]);

    const third = await list(api, `limit=2&cursor=${encodeURIComponent(second.next!)}`);
    expect(ids(third)).toEqual([e1]);
    expect(third.next).toBeUndefined();
    const back = await list(api, `limit=2&cursor=${encodeURIComponent(third.prev!)}`);
    expect(ids(back)).toEqual([e3, e2]);
    const front = await list(api, `limit=2&cursor=${encodeURIComponent(back.prev!)}`);
    expect(ids(front)).toEqual([e5, e4]);
    // The new entries are before the old first page now, reachable backwards and from the top.
    const newest = await list(api, `limit=2&cursor=${encodeURIComponent(front.prev!)}`);
    expect(newest.data.map((e) => e.requestId)).toEqual(['req-new', 'req-new']);
    expect(newest.prev).toBeUndefined();
    expect(ids(await list(api, 'limit=2'))).toEqual(ids(newest));
  });
});

describe('audit log: errors', () => {
  it.each(['limit=0', 'limit=101', 'limit=ten', 'cursor=forged', 'cursor=', 'from=yesterday', 'to=2026-13-01T00:00:00Z', 'actorType=robot', 'operation='])(
    'refuses %s with 400',
    async (query) => {
      const { api } = await service.newWorkspace();
      const res = await api.get(`${LIST}?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', status: 400 });
    },
  );

  it('refuses a cursor issued for another list', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await recordEvents(service.pool, [
      { workspaceId, type: 'customer.created', payload: {} },
      { workspaceId, type: 'customer.created', payload: {} },
    ]);
    const events = await api.get('/api/v1/events?limit=1');
    expect(events.body.next).toEqual(expect.any(String));
    const res = await api.get(`${LIST}?cursor=${encodeURIComponent(events.body.next)}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'query.cursor' })]);
  });

  it('refuses a from after to', async () => {
    const { api } = await service.newWorkspace();
    const res = await api.get(`${LIST}?from=2026-01-02T00:00:00.000Z&to=2026-01-01T00:00:00.000Z`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: 'query.from', message: 'from must not be after to' }]);
    expect((await api.get(`${LIST}?from=2026-01-01T00:00:00.000Z&to=2026-01-01T00:00:00.000Z`)).status).toBe(200);
  });
});

describe('audit log: security', () => {
  it('needs the audit:read scope', async () => {
    const { workspaceId, api: reader } = await service.newWorkspace(['audit:read']);
    await seedAuditEntry(service.pool, workspaceId);
    expect((await list(reader)).data).toHaveLength(1);
    const { api: other } = await service.newWorkspace(['campaigns:write', 'events:read']);
    const refused = await other.get(LIST);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
    expect((await service.api().get(LIST)).status).toBe(401);
  });

  it("never shows another workspace's entries, not even by filtering on their ids", async () => {
    const a = await service.newWorkspace();
    const b = await service.newWorkspace();
    const actor = { type: 'api_key' as const, id: randomUUID(), label: 'a key' };
    const resourceId = randomUUID();
    const [aEntry] = await seedAuditEntries(service.pool, a.workspaceId, 3, ago(MINUTE), { actor, resourceId });
    const bEntry = await seedAuditEntry(service.pool, b.workspaceId);
    expect(ids(await list(b.api))).toEqual([bEntry]);
    expect((await list(b.api, `resourceId=${resourceId}`)).data).toEqual([]);
    expect((await list(b.api, `actorId=${actor.id}`)).data).toEqual([]);
    expect(ids(await list(a.api, `resourceId=${resourceId}`))).toContain(aEntry);
    // A's cursor carries a position, not a permission: used by B it pages B's entries only.
    const aPage = await list(a.api, 'limit=1');
    expect(ids(await list(b.api, `cursor=${encodeURIComponent(aPage.next!)}`))).not.toContain(aEntry);
  });

  it('has no route that changes or deletes an entry', async () => {
    const routes = operations.filter((op) => op.path.startsWith('/audit-log'));
    expect(routes.map((op) => [op.name, op.method, op.effect])).toEqual([['audit.list', 'get', 'read']]);
    const { api, workspaceId } = await service.newWorkspace();
    const id = await seedAuditEntry(service.pool, workspaceId);
    for (const method of ['DELETE', 'PATCH', 'PUT']) {
      for (const path of [LIST, `${LIST}/${id}`]) {
        const res = await api.request(method, path, { body: {} });
        expect([404, 405], `${method} ${path}`).toContain(res.status);
      }
    }
    expect(ids(await list(api))).toEqual([id]);
  });

  it('refuses an UPDATE of an entry in the database; only the retention delete removes entries, by age', async () => {
    const { workspaceId } = await service.newWorkspace();
    const old = await seedAuditEntry(service.pool, workspaceId, { createdAt: ago(400 * 24 * 60 * MINUTE) });
    const recent = await seedAuditEntry(service.pool, workspaceId, { createdAt: ago(364 * 24 * 60 * MINUTE) });
    await expect(service.pool.query(`UPDATE audit_entries SET actor_label = 'someone else' WHERE id = $1`, [recent])).rejects.toMatchObject({
      code: '42501',
      message: 'audit entries cannot be changed',
    });
    expect(await pruneExpiredAuditEntries(service.pool, 365)).toBeGreaterThanOrEqual(1);
    const { rows } = await service.pool.query('SELECT id, actor_label FROM audit_entries WHERE id = ANY($1)', [[old, recent]]);
    expect(rows).toEqual([{ id: recent, actor_label: 'test key' }]);
  });
});
