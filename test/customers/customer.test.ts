// Customers over real HTTP and a real PostgreSQL: CRUD, search, the customer.created outbox event, upsert, tenancy.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertCustomer } from '../../src/domains/customers/index.js';
import { createPool, withTransaction } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

interface EventRow {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

async function customerCreatedEvents(workspaceId: string): Promise<EventRow[]> {
  const { rows } = await service.pool.query<EventRow>(
    `SELECT id, type, payload, created_at FROM events WHERE workspace_id = $1 AND type = 'customer.created' ORDER BY created_at`,
    [workspaceId],
  );
  return rows;
}

function expectProblem(response: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ type: expect.any(String), title: expect.any(String), status, code });
}

describe('customers: happy path', () => {
  it('creates, reads, lists, updates and deletes a customer', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/customers', {
      sourceId: 'crm-1',
      email: 'Ada@Example.com',
      name: 'Ada',
      metadata: { tier: 'gold' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      sourceId: 'crm-1',
      email: 'Ada@Example.com',
      name: 'Ada',
      metadata: { tier: 'gold' },
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    const id = created.body.id;

    expect((await api.get(`/api/v1/customers/${id}`)).body).toEqual(created.body);
    const list = await api.get('/api/v1/customers');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([created.body]);
    expect(list.body.next).toBeUndefined();
    expect(list.body.prev).toBeUndefined();

    const updated = await api.patch(`/api/v1/customers/${id}`, { name: 'Ada L.', email: null, metadata: { tier: 'silver' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id, sourceId: 'crm-1', email: null, name: 'Ada L.', metadata: { tier: 'silver' } });
    expect(Date.parse(updated.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));
    expect((await api.get(`/api/v1/customers/${id}`)).body).toEqual(updated.body);

    const deleted = await api.delete(`/api/v1/customers/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect((await api.get(`/api/v1/customers/${id}`)).status).toBe(404);
  });

  it('creates a customer with no fields at all', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/customers', {});
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ sourceId: null, email: null, name: null, metadata: {} });
  });

  it('records customer.created with its payload in the transaction that creates the customer', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const full = await api.post('/api/v1/customers', { sourceId: 'ev-1', email: 'ev@example.com', name: 'Eve' });
    const bare = await api.post('/api/v1/customers', { name: 'No ids' });
    const events = await customerCreatedEvents(workspaceId);
    expect(events.map((e) => e.payload)).toEqual([
      { customerId: full.body.id, sourceId: 'ev-1', email: 'ev@example.com' },
      { customerId: bare.body.id },
    ]);
    // now() is the transaction's start time: equal timestamps (to the microsecond) mean one transaction wrote both rows.
    const { rows } = await service.pool.query<{ same: boolean }>(
      'SELECT e.created_at = c.created_at AS same FROM events e, customers c WHERE e.id = $1 AND c.id = $2',
      [events[0]!.id, full.body.id],
    );
    expect(rows[0]?.same).toBe(true);
  });

  it('finds customers by exact sourceId and by email in any case', async () => {
    const { api } = await service.newWorkspace();
    const ada = await api.post('/api/v1/customers', { sourceId: 'S-1', email: 'Ada@Example.com' });
    const bob = await api.post('/api/v1/customers', { sourceId: 's-1', email: 'bob@example.com' });
    await api.post('/api/v1/customers', { sourceId: 'S-10', email: 'ada@example.org' });

    const bySource = await api.get('/api/v1/customers?sourceId=S-1');
    expect(bySource.status).toBe(200);
    expect(bySource.body.data.map((c: { id: string }) => c.id)).toEqual([ada.body.id]);
    expect((await api.get('/api/v1/customers?sourceId=s-1')).body.data.map((c: { id: string }) => c.id)).toEqual([bob.body.id]);

    for (const email of ['ada@example.com', 'ADA@EXAMPLE.COM', 'Ada@Example.com']) {
      const byEmail = await api.get(`/api/v1/customers?email=${encodeURIComponent(email)}`);
      expect(byEmail.body.data.map((c: { id: string }) => c.id)).toEqual([ada.body.id]);
    }
    expect((await api.get('/api/v1/customers?email=nobody%40example.com')).body).toEqual({ data: [] });
    const both = await api.get('/api/v1/customers?sourceId=S-1&email=BOB%40example.com');
    expect(both.body.data).toEqual([]);
  });

  it('upserts by sourceId: creates once with customer.created, then returns the same customer', async () => {
    const { workspaceId } = await service.newWorkspace();
    const first = await withTransaction(service.pool, (tx) =>
      upsertCustomer(tx, workspaceId, { sourceId: 'up-1', email: 'up@example.com', name: 'Up', metadata: { a: 1 } }),
    );
    expect(first).toMatchObject({ sourceId: 'up-1', email: 'up@example.com', name: 'Up', metadata: { a: 1 } });
    const again = await withTransaction(service.pool, (tx) => upsertCustomer(tx, workspaceId, { sourceId: 'up-1', name: 'Other' }));
    expect(again).toEqual(first);
    const byId = await withTransaction(service.pool, (tx) => upsertCustomer(tx, workspaceId, { id: first!.id }));
    expect(byId).toEqual(first);
    expect((await customerCreatedEvents(workspaceId)).map((e) => e.payload)).toEqual([
      { customerId: first!.id, sourceId: 'up-1', email: 'up@example.com' },
    ]);
  });

  it('creates exactly one customer and one event when 20 transactions upsert one new sourceId at once', async () => {
    const { workspaceId } = await service.newWorkspace();
    const racePool = createPool(service.db.url, { max: 20, log: createLogger('silent') });
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          withTransaction(racePool, (tx) => upsertCustomer(tx, workspaceId, { sourceId: 'race-1', name: `racer ${i}` })),
        ),
      );
      expect(new Set(results.map((c) => c?.id)).size).toBe(1);
    } finally {
      await racePool.end();
    }
    const { rows } = await service.pool.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM customers WHERE workspace_id = $1 AND source_id = 'race-1'`,
      [workspaceId],
    );
    expect(rows[0]!.count).toBe(1);
    expect(await customerCreatedEvents(workspaceId)).toHaveLength(1);
  });

  it('leaves neither customer nor event when the upserting transaction rolls back', async () => {
    const { workspaceId } = await service.newWorkspace();
    const failed = withTransaction(service.pool, async (tx) => {
      await upsertCustomer(tx, workspaceId, { sourceId: 'rolled-back' });
      throw new Error('redemption failed');
    });
    await expect(failed).rejects.toThrow('redemption failed');
    const { rows } = await service.pool.query('SELECT 1 FROM customers WHERE workspace_id = $1', [workspaceId]);
    expect(rows).toHaveLength(0);
    expect(await customerCreatedEvents(workspaceId)).toHaveLength(0);
  });
});

describe('customers: errors', () => {
  it('answers 409 conflict for a sourceId that exists, and records no second event', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    expect((await api.post('/api/v1/customers', { sourceId: 'dup' })).status).toBe(201);
    const duplicate = await api.post('/api/v1/customers', { sourceId: 'dup', email: 'x@example.com' });
    expectProblem(duplicate, 409, 'conflict');
    expect(await customerCreatedEvents(workspaceId)).toHaveLength(1);
    const { rows } = await service.pool.query('SELECT 1 FROM customers WHERE workspace_id = $1', [workspaceId]);
    expect(rows).toHaveLength(1);
  });

  it('answers 409 when an update takes another customer’s sourceId', async () => {
    const { api } = await service.newWorkspace();
    await api.post('/api/v1/customers', { sourceId: 'taken' });
    const other = await api.post('/api/v1/customers', { sourceId: 'mine' });
    expectProblem(await api.patch(`/api/v1/customers/${other.body.id}`, { sourceId: 'taken' }), 409, 'conflict');
    expect((await api.get(`/api/v1/customers/${other.body.id}`)).body.sourceId).toBe('mine');
    expect((await api.patch(`/api/v1/customers/${other.body.id}`, { sourceId: 'mine' })).status).toBe(200);
  });

  it('refuses an invalid email with 400 and field errors', async () => {
    const { api } = await service.newWorkspace();
    const response = await api.post('/api/v1/customers', { email: 'not-an-email' });
    expectProblem(response, 400, 'invalid_request');
    expect(response.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining('email') })]));
    const created = await api.post('/api/v1/customers', { sourceId: 'valid' });
    expectProblem(await api.patch(`/api/v1/customers/${created.body.id}`, { email: 'nope' }), 400, 'invalid_request');
  });

  it('refuses malformed ids, wrong types and unknown ids', async () => {
    const { api } = await service.newWorkspace();
    expectProblem(await api.get('/api/v1/customers/not-a-uuid'), 400, 'invalid_request');
    expectProblem(await api.post('/api/v1/customers', { sourceId: 42 }), 400, 'invalid_request');
    expectProblem(await api.post('/api/v1/customers', { sourceId: '' }), 400, 'invalid_request');
    expectProblem(await api.post('/api/v1/customers', { metadata: 'x' }), 400, 'invalid_request');
    const id = randomUUID();
    expectProblem(await api.get(`/api/v1/customers/${id}`), 404, 'not_found');
    expectProblem(await api.patch(`/api/v1/customers/${id}`, { name: 'x' }), 404, 'not_found');
    expectProblem(await api.delete(`/api/v1/customers/${id}`), 404, 'not_found');
  });
});

describe('customers: security', () => {
  it("answers 404 for another workspace's customer, exactly as for a random id", async () => {
    const owner = await service.newWorkspace();
    const stranger = await service.newWorkspace();
    const foreign = await owner.api.post('/api/v1/customers', { sourceId: 'private', email: 'p@example.com' });
    const random = randomUUID();
    const pairs = [
      [stranger.api.get(`/api/v1/customers/${foreign.body.id}`), stranger.api.get(`/api/v1/customers/${random}`)],
      [stranger.api.patch(`/api/v1/customers/${foreign.body.id}`, { name: 'x' }), stranger.api.patch(`/api/v1/customers/${random}`, { name: 'x' })],
      [stranger.api.delete(`/api/v1/customers/${foreign.body.id}`), stranger.api.delete(`/api/v1/customers/${random}`)],
    ];
    for (const [foreignCall, randomCall] of pairs) {
      const [a, b] = await Promise.all([foreignCall!, randomCall!]);
      expectProblem(a, 404, 'not_found');
      expect(a.body).toEqual(b.body);
    }
    expect((await owner.api.get(`/api/v1/customers/${foreign.body.id}`)).body).toEqual(foreign.body);
    expect((await stranger.api.get('/api/v1/customers?sourceId=private')).body.data).toEqual([]);
    expect((await stranger.api.get('/api/v1/customers?email=p%40example.com')).body.data).toEqual([]);
  });

  it('keeps sourceIds per workspace, and upsert never reaches into another workspace', async () => {
    const owner = await service.newWorkspace();
    const stranger = await service.newWorkspace();
    const mine = await owner.api.post('/api/v1/customers', { sourceId: 'shared-id' });
    const theirs = await stranger.api.post('/api/v1/customers', { sourceId: 'shared-id' });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    const byForeignId = await withTransaction(service.pool, (tx) => upsertCustomer(tx, stranger.workspaceId, { id: mine.body.id }));
    expect(byForeignId).toBeUndefined();
    const bySourceId = await withTransaction(service.pool, (tx) => upsertCustomer(tx, stranger.workspaceId, { sourceId: 'shared-id' }));
    expect(bySourceId?.id).toBe(theirs.body.id);
  });

  it('lets a customers:read key list and read but not write', async () => {
    const { api } = await service.newWorkspace(['customers:read']);
    expectProblem(await api.post('/api/v1/customers', { sourceId: 'nope' }), 403, 'forbidden');
    expectProblem(await api.post('/api/v1/customers', { email: 'not-an-email' }), 403, 'forbidden');
    expectProblem(await api.patch(`/api/v1/customers/${randomUUID()}`, { name: 'x' }), 403, 'forbidden');
    expectProblem(await api.delete(`/api/v1/customers/${randomUUID()}`), 403, 'forbidden');
    const list = await api.get('/api/v1/customers');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [] });
  });

  it('refuses keys of other groups and requests without a key', async () => {
    const { api } = await service.newWorkspace(['vouchers:write']);
    expectProblem(await api.get('/api/v1/customers'), 403, 'forbidden');
    const anonymous = service.api();
    expectProblem(await anonymous.get('/api/v1/customers'), 401, 'unauthorized');
    expectProblem(await anonymous.post('/api/v1/customers', { sourceId: 'x' }), 401, 'unauthorized');
  });
});

describe('query strings as typed by hand', () => {
  it('accepts an unencoded @ in the email filter', async () => {
    const { api } = await service.newWorkspace();
    await api.post('/api/v1/customers', { email: 'grace@example.com' });
    const res = await api.get('/api/v1/customers?email=GRACE@example.com');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
  });
});
