// POST /customers/import over real HTTP and a real PostgreSQL: customers created with their customer.created events and
// AUTO segment memberships, repeats and taken sourceIds refused by row, the scope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { sentAgainWhenOverloaded } from '../support/overload-retry.js';
import { until } from '../support/until.js';
import { awaitImport, csvChunks, postBody, range } from './import-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

describe('customers.import', () => {
  it('creates customers with their events and AUTO segments; repeats, taken sourceIds and bad rows are refused by row', async () => {
    const { key, workspaceId, api } = await service.newWorkspace();
    const vip = await api.create('/api/v1/segments', {
      name: 'VIP',
      type: 'AUTO',
      conditions: { field: 'customer.metadata.tier', op: 'eq', value: 'gold' },
    });
    await api.create('/api/v1/customers', { sourceId: 'crm-taken' });
    const csv = [
      'sourceId,email,name,metadata.tier',
      'crm-1,ada@example.com,Ada,gold', // 1
      'crm-2,,Bob,', // 2
      'crm-1,,,', // 3: repeats row 1
      'crm-taken,,,', // 4
      'crm-3,not-an-email,,', // 5
      ',x@example.com,,', // 6: no sourceId
    ].join('\n');
    const posted = await postBody(service.baseUrl, '/api/v1/customers/import', key, csv, 'text/csv');
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const done = await awaitImport(service, key, posted.body.id);
    expect(done).toMatchObject({ kind: 'customers', status: 'SUCCEEDED', counts: { read: 6, inserted: 2, rejected: 4 } });
    expect(done.rejections.map((r: any) => [r.row, r.code])).toEqual([
      [3, 'duplicate_in_file'],
      [4, 'source_id_exists'],
      [5, 'invalid_row'],
      [6, 'invalid_row'],
    ]);
    const { rows } = await service.pool.query(
      `SELECT c.source_id, c.email, c.name, c.metadata,
         (SELECT count(*)::int FROM events e WHERE e.workspace_id = c.workspace_id AND e.type = 'customer.created' AND e.payload->>'customerId' = c.id::text) AS created_events,
         EXISTS (SELECT 1 FROM segment_members m WHERE m.customer_id = c.id AND m.segment_id = $2) AS vip
       FROM customers c WHERE c.workspace_id = $1 AND c.source_id IN ('crm-1', 'crm-2') ORDER BY c.source_id`,
      [workspaceId, vip.id],
    );
    expect(rows).toEqual([
      { source_id: 'crm-1', email: 'ada@example.com', name: 'Ada', metadata: { tier: 'gold' }, created_events: 1, vip: true },
      { source_id: 'crm-2', email: null, name: 'Bob', metadata: {}, created_events: 1, vip: false },
    ]);
    const audit = await service.pool.query('SELECT resource_id FROM audit_entries WHERE workspace_id = $1 AND operation = $2', [workspaceId, 'customers.import']);
    expect(audit.rows).toEqual([{ resource_id: posted.body.id }]);
  });

  it('imports 20,000 customers from NDJSON with exact counts', async () => {
    const { key, workspaceId } = await service.newWorkspace();
    const count = 20_000;
    const started = performance.now();
    const lines = range(count, (i) => JSON.stringify({ sourceId: `nd-${i}`, email: `c${i}@example.com`, metadata: { n: i } }));
    const posted = await postBody(service.baseUrl, '/api/v1/customers/import', key, csvChunks(JSON.stringify({ sourceId: 'nd-first' }), lines), 'application/x-ndjson');
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const done = await awaitImport(service, key, posted.body.id);
    console.log(`customers.import: ${count + 1} customers in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    expect(done).toMatchObject({ status: 'SUCCEEDED', counts: { read: count + 1, inserted: count + 1, rejected: 0 } });
    const { rows } = await service.pool.query(
      "SELECT (SELECT count(*) FROM customers WHERE workspace_id = $1)::int AS customers, (SELECT count(*) FROM events WHERE workspace_id = $1 AND type = 'customer.created')::int AS events",
      [workspaceId],
    );
    expect(rows[0]).toEqual({ customers: count + 1, events: count + 1 });
  }, 120_000);

  it('needs customers:write', async () => {
    const reader = await service.newWorkspace(['customers:read', 'vouchers:write']);
    const denied = await postBody(service.baseUrl, '/api/v1/customers/import', reader.key, 'sourceId\nx\n', 'text/csv');
    expect(denied).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });

  it('accepts a burst of imports beyond the pool, a few at a time, while the rest of the service keeps its connections', async () => {
    const { key, api } = await service.newWorkspace();
    const [imports, rows] = [14, 10_000];
    // More imports at once than the test pool's 10 connections, each holding one while it stages and merges.
    // An import that waited past the service's bound for a slot is answered 503 with Retry-After (its backpressure, seen
    // on a starved machine): sent again after it, at most twice; any other answer counts as it is.
    const posted = Array.from({ length: imports }, (_, n) =>
      sentAgainWhenOverloaded(
        () => postBody(service.baseUrl, '/api/v1/customers/import', key, csvChunks('sourceId,name', range(rows, (i) => `burst-${n}-${i},N${i}`)), 'text/csv'),
        2,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await api.get('/api/v1/customers?limit=1')).status).toBe(200);
    const answers = await Promise.all(posted);
    expect(answers.map((a) => a.status), JSON.stringify(answers.find((a) => a.status !== 202)?.body)).toEqual(Array(imports).fill(202));
    for (const answer of answers) expect(await awaitImport(service, key, answer.body.id, 120_000)).toMatchObject({ status: 'SUCCEEDED', counts: { inserted: rows } });
    // Each import gave its session back with its staging tables dropped.
    await until(async () => (await service.pool.query(`SELECT count(*)::int AS n FROM pg_class WHERE relname LIKE 'import\\_rows\\_%'`)).rows[0].n === 0, 10_000, 'staging dropped');
  }, 180_000);
});
