// The customer lookups of checkouts, coalesced per event-loop turn (loadCustomerFactsSoon), against a real PostgreSQL:
// what each finds is what a lookup of its own finds, lookups of one kind share one statement, a value PostgreSQL
// refuses fails only its own lookup, and racing redemptions by many customers each count against their own customer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCustomerFacts, loadCustomerFactsSoon } from '../../src/domains/segments/index.js';
import { createPool, type Pool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

/** A pool of its own on the test's database, counting the statements sent through it. */
function countingPool(): { pool: Pool; statements: () => number } {
  const pool = createPool(service.db.url, { max: 4, log: createLogger('silent') });
  let count = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    count += 1;
    return query(...args);
  };
  return { pool, statements: () => count };
}

describe('customer lookups at checkout', () => {
  it('finds in one statement per kind what each lookup finds alone, across workspaces', async () => {
    const a = await service.newWorkspace();
    const b = await service.newWorkspace();
    const segment = (await a.api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: { field: 'customer.metadata.tier', op: 'eq', value: 'gold' } })).body;
    expect(segment.id).toBeDefined();
    const ada = (await a.api.post('/api/v1/customers', { sourceId: 'ada', email: 'Ada@Example.test', metadata: { tier: 'gold' } })).body;
    const bob = (await a.api.post('/api/v1/customers', { sourceId: 'bob', email: 'bob@example.test' })).body;
    const otherAda = (await b.api.post('/api/v1/customers', { sourceId: 'ada' })).body;
    const lookups = [
      { workspaceId: a.workspaceId, ref: { sourceId: 'ada' } },
      { workspaceId: a.workspaceId, ref: { sourceId: 'bob' } },
      { workspaceId: b.workspaceId, ref: { sourceId: 'ada' } },
      { workspaceId: b.workspaceId, ref: { sourceId: 'bob' } },
      { workspaceId: a.workspaceId, ref: { sourceId: 'nobody' } },
      { workspaceId: a.workspaceId, ref: { id: bob.id } },
      { workspaceId: b.workspaceId, ref: { id: otherAda.id } },
      { workspaceId: b.workspaceId, ref: { id: ada.id } },
      { workspaceId: a.workspaceId, ref: { email: 'ADA@example.test' } },
      { workspaceId: a.workspaceId, ref: { email: 'bob@example.test' } },
      { workspaceId: a.workspaceId, ref: {} },
    ];
    const alone = await Promise.all(lookups.map((l) => loadCustomerFacts(service.pool, l.workspaceId, l.ref)));
    expect(alone.map((f) => f?.id)).toEqual([ada.id, bob.id, otherAda.id, undefined, undefined, bob.id, otherAda.id, undefined, ada.id, bob.id, undefined]);
    expect(alone[0]!.segments).toEqual([segment.id]);

    const { pool, statements } = countingPool();
    try {
      // Asked in one turn, as the requests read from many connections at once are.
      const together = await Promise.all(lookups.map((l) => loadCustomerFactsSoon(pool, l.workspaceId, l.ref)));
      expect(together).toEqual(alone);
      expect(statements()).toBe(3);
      // A lone lookup in a turn of its own is one statement too.
      expect(await loadCustomerFactsSoon(pool, a.workspaceId, { sourceId: 'ada' })).toEqual(alone[0]);
      expect(statements()).toBe(4);
    } finally {
      await pool.end();
    }
  });

  it('fails only the lookup whose value PostgreSQL refuses', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const ada = (await api.post('/api/v1/customers', { sourceId: 'ada' })).body;
    const { pool } = countingPool();
    try {
      const answers = await Promise.allSettled([
        loadCustomerFactsSoon(pool, workspaceId, { id: ada.id }),
        loadCustomerFactsSoon(pool, workspaceId, { id: 'not-a-uuid' }),
        loadCustomerFactsSoon(pool, workspaceId, { id: randomUUID() }),
      ]);
      expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((answers[0] as PromiseFulfilledResult<{ id: string }>).value.id).toBe(ada.id);
      expect((answers[2] as PromiseFulfilledResult<unknown>).value).toBeUndefined();
    } finally {
      await pool.end();
    }
  });

  it('counts each of 90 racing redemptions by 30 customers (known and new) against its own customer', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const v = (await api.post('/api/v1/vouchers', { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', perCustomerLimit: 2 })).body;
    const names = Array.from({ length: 30 }, (_, i) => `shopper-${i}`);
    for (const sourceId of names.slice(0, 15)) await api.post('/api/v1/customers', { sourceId });
    const results = await Promise.all(
      names.flatMap((sourceId) =>
        [0, 1, 2].map(() => api.post(`/api/v1/vouchers/${v.code}/redemption`, { order: { amount: 1_000, currency: 'EUR' }, customer: { sourceId } }).then((r) => ({ sourceId, body: r.body }))),
      ),
    );
    for (const sourceId of names) {
      const own = results.filter((r) => r.sourceId === sourceId);
      expect(own.filter((r) => r.body.ok), sourceId).toHaveLength(2);
      expect(own.filter((r) => !r.body.ok).map((r) => r.body.code)).toEqual(['per_user_redemption_limit_reached']);
    }
    const { rows } = await service.pool.query<{ source_id: string; n: number }>(
      `SELECT c.source_id, count(*)::int AS n FROM redemptions r JOIN customers c ON c.id = r.customer_id
       WHERE r.workspace_id = $1 AND r.status = 'SUCCEEDED' GROUP BY c.source_id ORDER BY c.source_id`,
      [workspaceId],
    );
    expect(rows).toEqual([...names].sort().map((source_id) => ({ source_id, n: 2 })));
    const ids = new Map(results.filter((r) => r.body.ok).map((r) => [r.body.redemption.id as string, r.sourceId]));
    const owners = await service.pool.query<{ id: string; source_id: string }>(
      'SELECT r.id, c.source_id FROM redemptions r JOIN customers c ON c.id = r.customer_id WHERE r.id = ANY($1::uuid[])',
      [[...ids.keys()]],
    );
    expect(owners.rows).toHaveLength(60);
    for (const row of owners.rows) expect(row.source_id).toBe(ids.get(row.id));
  });
});
