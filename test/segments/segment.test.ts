// Segments over real HTTP and a real PostgreSQL: STATIC members, AUTO membership computed at creation and kept
// current by customer writes (with entered/left events in the same transaction), deletion, tenancy, bad conditions.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertCustomer } from '../../src/domains/customers/index.js';
import { loadCustomerFacts } from '../../src/domains/segments/index.js';
import { withTransaction } from '../../src/platform/database.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

function expectProblem(response: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status, code });
}

interface MembershipEvent {
  type: string;
  customerId: string;
  segmentId: string;
}

async function membershipEvents(workspaceId: string): Promise<MembershipEvent[]> {
  const { rows } = await service.pool.query<{ type: string; payload: { customerId: string; segmentId: string } }>(
    `SELECT type, payload FROM events WHERE workspace_id = $1 AND type LIKE 'customer.segment.%' ORDER BY created_at, id`,
    [workspaceId],
  );
  return rows.map((r) => ({ type: r.type, customerId: r.payload.customerId, segmentId: r.payload.segmentId }));
}

async function memberIds(api: ApiClient, segmentId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.get(`/api/v1/segments/${segmentId}/members?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(page.status).toBe(200);
    ids.push(...page.body.data.map((m: { customerId: string }) => m.customerId));
    cursor = page.body.next;
  } while (cursor);
  return ids.sort();
}

async function customer(api: ApiClient, body: Record<string, unknown>): Promise<string> {
  const res = await api.post('/api/v1/customers', body);
  expect(res.status).toBe(201);
  return res.body.id;
}

const gold = { field: 'customer.metadata.tier', op: 'eq', value: 'gold' };

describe('segments: STATIC', () => {
  it('creates with members, adds, lists, removes and deletes, recording each entry and exit', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const [ada, bob, cy] = [await customer(api, { name: 'Ada' }), await customer(api, { name: 'Bob' }), await customer(api, { name: 'Cy', email: 'cy@example.com' })];

    const created = await api.post('/api/v1/segments', { name: 'Newsletter', type: 'STATIC', customerIds: [ada] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Newsletter',
      type: 'STATIC',
      conditions: null,
      size: 1,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    const id = created.body.id;

    const added = await api.post(`/api/v1/segments/${id}/members`, { customerIds: [bob, cy, ada] });
    expect(added.status).toBe(200);
    expect(added.body.size).toBe(3);
    expect(await memberIds(api, id)).toEqual([ada, bob, cy].sort());
    const page = await api.get(`/api/v1/segments/${id}/members?limit=1`);
    expect(page.body.data).toEqual([{ customerId: expect.any(String), sourceId: null, email: expect.toBeOneOf([null, 'cy@example.com']), name: expect.any(String), addedAt: expect.stringMatching(/Z$/) }]);
    expect(page.body.next).toBeDefined();

    const removed = await api.post(`/api/v1/segments/${id}/members/remove`, { customerIds: [bob, randomUUID()] });
    expect(removed.status).toBe(200);
    expect(removed.body.size).toBe(2);
    expect((await api.get(`/api/v1/segments/${id}`)).body).toMatchObject({ size: 2, type: 'STATIC' });

    const renamed = await api.patch(`/api/v1/segments/${id}`, { name: 'Weekly letter' });
    expect(renamed.body).toMatchObject({ name: 'Weekly letter', size: 2 });
    expect((await api.get('/api/v1/segments')).body.data.map((s: { id: string }) => s.id)).toEqual([id]);

    expect((await api.delete(`/api/v1/segments/${id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/segments/${id}`)).status).toBe(404);
    expect((await api.get(`/api/v1/segments/${id}/members`)).status).toBe(404);

    const key = (e: MembershipEvent) => `${e.type} ${e.customerId} ${e.segmentId}`;
    expect((await membershipEvents(workspaceId)).map(key).sort()).toEqual(
      [
        ...[ada, bob, cy].map((c) => ({ type: 'customer.segment.entered', customerId: c, segmentId: id })),
        ...[bob, ada, cy].map((c) => ({ type: 'customer.segment.left', customerId: c, segmentId: id })),
      ]
        .map(key)
        .sort(),
    );
  });

  it('refuses unknown customer ids, naming them, and adds none of the request', async () => {
    const { api } = await service.newWorkspace();
    const other = await service.newWorkspace();
    const ada = await customer(api, { name: 'Ada' });
    const foreign = await customer(other.api, { name: 'Not yours' });
    const missing = randomUUID();
    const { body: segment } = await api.post('/api/v1/segments', { name: 'S', type: 'STATIC' });
    const res = await api.post(`/api/v1/segments/${segment.id}/members`, { customerIds: [ada, foreign, missing] });
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.errors[0].path).toBe('body.customerIds');
    expect(res.body.detail).toContain(foreign);
    expect(res.body.detail).toContain(missing);
    expect(res.body.detail).not.toContain(ada);
    expect(await memberIds(api, segment.id)).toEqual([]);
    expectProblem(await api.post('/api/v1/segments', { name: 'S', type: 'STATIC', customerIds: [missing] }), 400, 'invalid_request');
    expect((await api.get('/api/v1/segments')).body.data).toHaveLength(1);
  });

  it('drops memberships when a customer is deleted', async () => {
    const { api } = await service.newWorkspace();
    const ada = await customer(api, { name: 'Ada' });
    const bob = await customer(api, { name: 'Bob', metadata: { tier: 'gold' } });
    const { body: list } = await api.post('/api/v1/segments', { name: 'S', type: 'STATIC', customerIds: [ada, bob] });
    const { body: auto } = await api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: gold });
    expect(auto.size).toBe(1);
    expect((await api.delete(`/api/v1/customers/${bob}`)).status).toBe(204);
    expect(await memberIds(api, list.id)).toEqual([ada]);
    expect((await api.get(`/api/v1/segments/${auto.id}`)).body.size).toBe(0);
  });
});

describe('segments: AUTO', () => {
  it('computes the members from every customer at creation', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const ada = await customer(api, { name: 'Ada', email: 'ada@shop.example', metadata: { tier: 'gold', visits: 12 } });
    const bob = await customer(api, { name: 'Bob', email: 'bob@other.example', metadata: { tier: 'gold', visits: 2 } });
    await customer(api, { name: 'Cy', metadata: { tier: 'silver', visits: 30 } });
    await customer(api, {});

    const created = await api.post('/api/v1/segments', {
      name: 'Loyal gold',
      type: 'AUTO',
      conditions: { all: [gold, { any: [{ field: 'customer.metadata.visits', op: 'gte', value: 10 }, { field: 'customer.email', op: 'contains', value: '@other.' }] }] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ type: 'AUTO', size: 2, conditions: { all: [gold, expect.any(Object)] } });
    expect(await memberIds(api, created.body.id)).toEqual([ada, bob].sort());
    const events = await membershipEvents(workspaceId);
    expect(events.map((e) => [e.type, e.customerId, e.segmentId]).sort()).toEqual(
      [ada, bob].map((c) => ['customer.segment.entered', c, created.body.id]).sort(),
    );
  });

  it('computes membership over more customers than one batch', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await service.pool.query(
      `INSERT INTO customers (workspace_id, source_id, metadata)
       SELECT $1, 'bulk-' || n, jsonb_build_object('tier', CASE WHEN n % 3 = 0 THEN 'gold' ELSE 'basic' END) FROM generate_series(1, 2500) AS n`,
      [workspaceId],
    );
    const created = await api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: gold });
    expect(created.body.size).toBe(833);
    const changed = await api.patch(`/api/v1/segments/${created.body.id}`, { conditions: { field: 'customer.sourceId', op: 'in', value: ['bulk-1', 'bulk-3'] } });
    expect(changed.status).toBe(200);
    expect(changed.body.size).toBe(2);
    const counts = await service.pool.query<{ type: string; n: number }>(
      `SELECT type, count(*)::int AS n FROM events WHERE workspace_id = $1 AND type LIKE 'customer.segment.%' GROUP BY type ORDER BY type`,
      [workspaceId],
    );
    // bulk-1 enters with the new conditions; every gold customer but bulk-3 leaves.
    expect(counts.rows).toEqual([
      { type: 'customer.segment.entered', n: 834 },
      { type: 'customer.segment.left', n: 832 },
    ]);
  });

  it('keeps membership current as customers are created and updated: they enter and leave, with events', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const { body: segment } = await api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: gold });
    const { body: other } = await api.post('/api/v1/segments', { name: 'Named', type: 'AUTO', conditions: { field: 'customer.name', op: 'exists' } });
    expect(segment.size).toBe(0);

    const ada = await customer(api, { metadata: { tier: 'gold' } });
    expect(await memberIds(api, segment.id)).toEqual([ada]);
    expect(await memberIds(api, other.id)).toEqual([]);

    expect((await api.patch(`/api/v1/customers/${ada}`, { name: 'Ada' })).status).toBe(200);
    expect(await memberIds(api, segment.id)).toEqual([ada]);
    expect(await memberIds(api, other.id)).toEqual([ada]);

    expect((await api.patch(`/api/v1/customers/${ada}`, { metadata: { tier: 'silver' } })).status).toBe(200);
    expect(await memberIds(api, segment.id)).toEqual([]);
    expect((await api.patch(`/api/v1/customers/${ada}`, { name: null })).status).toBe(200);
    expect(await memberIds(api, other.id)).toEqual([]);

    expect(await membershipEvents(workspaceId)).toEqual([
      { type: 'customer.segment.entered', customerId: ada, segmentId: segment.id },
      { type: 'customer.segment.entered', customerId: ada, segmentId: other.id },
      { type: 'customer.segment.left', customerId: ada, segmentId: segment.id },
      { type: 'customer.segment.left', customerId: ada, segmentId: other.id },
    ]);
    // The entry is written in the transaction that created the customer (now() is the transaction's start).
    const { rows } = await service.pool.query<{ same: boolean }>(
      `SELECT e.created_at = c.created_at AS same FROM events e JOIN customers c ON c.id = (e.payload->>'customerId')::uuid
       WHERE e.workspace_id = $1 AND e.type = 'customer.segment.entered' ORDER BY e.created_at LIMIT 1`,
      [workspaceId],
    );
    expect(rows[0]?.same).toBe(true);
  });

  it('takes in a customer that a redemption creates by sourceId (upsertCustomer)', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const { body: segment } = await api.post('/api/v1/segments', { name: 'Shop', type: 'AUTO', conditions: { field: 'customer.sourceId', op: 'contains', value: 'shop-' } });
    const created = await withTransaction(service.pool, (tx) => upsertCustomer(tx, workspaceId, { sourceId: 'shop-7', metadata: { tier: 'gold' } }));
    expect(await memberIds(api, segment.id)).toEqual([created!.id]);
    const facts = await loadCustomerFacts(service.pool, workspaceId, { id: created!.id });
    expect(facts).toEqual({
      id: created!.id,
      sourceId: 'shop-7',
      email: null,
      name: null,
      createdAt: created!.createdAt,
      metadata: { tier: 'gold' },
      segments: [segment.id],
    });
    expect(await loadCustomerFacts(service.pool, workspaceId, { id: randomUUID() })).toBeUndefined();
    expect(await loadCustomerFacts(service.pool, (await service.newWorkspace()).workspaceId, { id: created!.id })).toBeUndefined();
  });

  it('refuses to add or remove members by hand', async () => {
    const { api } = await service.newWorkspace();
    const ada = await customer(api, {});
    const { body: segment } = await api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: gold });
    expectProblem(await api.post(`/api/v1/segments/${segment.id}/members`, { customerIds: [ada] }), 409, 'conflict');
    expectProblem(await api.post(`/api/v1/segments/${segment.id}/members/remove`, { customerIds: [ada] }), 409, 'conflict');
  });
});

describe('segments: malformed input', () => {
  it.each([
    [{ name: 'x', type: 'AUTO' }, 'body.conditions'],
    [{ name: 'x', type: 'STATIC', conditions: gold }, 'body.conditions'],
    [{ name: 'x', type: 'AUTO', conditions: gold, customerIds: [randomUUID()] }, 'body.customerIds'],
    [{ name: 'x', type: 'AUTO', conditions: { all: [gold, { field: 'order.amount', op: 'gt', value: 1 }] } }, 'body.conditions.all.1.field'],
    [{ name: 'x', type: 'AUTO', conditions: { not: { field: 'time.hour', op: 'lt', value: 9 } } }, 'body.conditions.not.field'],
    [{ name: 'x', type: 'AUTO', conditions: { field: 'customer.segments', op: 'exists' } }, 'body.conditions.field'],
    [{ name: 'x', type: 'AUTO', conditions: { any: [gold, { field: 'customer.metadata.tier', op: 'between', value: 1 }] } }, 'body.conditions.any.1.op'],
    [{ name: 'x', type: 'DYNAMIC', conditions: gold }, 'body.type'],
    [{ name: 'x', type: 'STATIC', customerIds: [] }, 'body.customerIds'],
  ])('refuses %j at %s', async (body, path) => {
    const { api } = await service.newWorkspace();
    const res = await api.post('/api/v1/segments', body);
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('refuses conditions for a STATIC segment on update, and order fields for an AUTO one', async () => {
    const { api } = await service.newWorkspace();
    const { body: list } = await api.post('/api/v1/segments', { name: 'S', type: 'STATIC' });
    const res = await api.patch(`/api/v1/segments/${list.id}`, { conditions: gold });
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.errors[0].path).toBe('body.conditions');
    const { body: auto } = await api.post('/api/v1/segments', { name: 'A', type: 'AUTO', conditions: gold });
    expectProblem(await api.patch(`/api/v1/segments/${auto.id}`, { conditions: { field: 'order.currency', op: 'eq', value: 'EUR' } }), 400, 'invalid_request');
    expect((await api.get(`/api/v1/segments/${auto.id}`)).body.conditions).toEqual(gold);
  });
});

describe('segments: tenancy and scopes', () => {
  it("answers 404 for another workspace's segment, and lists only its own", async () => {
    const mine = await service.newWorkspace();
    const theirs = await service.newWorkspace();
    const theirCustomer = await customer(theirs.api, {});
    const { body: segment } = await theirs.api.post('/api/v1/segments', { name: 'Theirs', type: 'STATIC', customerIds: [theirCustomer] });
    const myCustomer = await customer(mine.api, {});
    expect((await mine.api.get(`/api/v1/segments/${segment.id}`)).status).toBe(404);
    expect((await mine.api.get(`/api/v1/segments/${segment.id}/members`)).status).toBe(404);
    expect((await mine.api.patch(`/api/v1/segments/${segment.id}`, { name: 'Mine' })).status).toBe(404);
    expect((await mine.api.post(`/api/v1/segments/${segment.id}/members`, { customerIds: [myCustomer] })).status).toBe(404);
    expect((await mine.api.post(`/api/v1/segments/${segment.id}/members/remove`, { customerIds: [theirCustomer] })).status).toBe(404);
    expect((await mine.api.delete(`/api/v1/segments/${segment.id}`)).status).toBe(404);
    expect((await mine.api.get('/api/v1/segments')).body).toEqual({ data: [] });
    expect(await memberIds(theirs.api, segment.id)).toEqual([theirCustomer]);
  });

  it("never takes another workspace's customers into an AUTO segment", async () => {
    const mine = await service.newWorkspace();
    const theirs = await service.newWorkspace();
    await customer(theirs.api, { metadata: { tier: 'gold' } });
    const { body: segment } = await mine.api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: gold });
    expect(segment.size).toBe(0);
    await customer(theirs.api, { metadata: { tier: 'gold' } });
    expect((await mine.api.get(`/api/v1/segments/${segment.id}`)).body.size).toBe(0);
  });

  it('needs segments:write to change segments and segments:read to read them', async () => {
    const reader = await service.newWorkspace(['segments:read']);
    expectProblem(await reader.api.post('/api/v1/segments', { name: 'x', type: 'STATIC' }), 403, 'forbidden');
    expect((await reader.api.get('/api/v1/segments')).status).toBe(200);
    const other = await service.newWorkspace(['customers:write']);
    expectProblem(await other.api.get('/api/v1/segments'), 403, 'forbidden');
  });
});
