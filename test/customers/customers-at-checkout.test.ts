// The customers of checkouts, read and created per event-loop turn (customerFactsLoader, customerUpserter), against
// a real PostgreSQL: what each lookup finds is what a lookup of its own finds, lookups of one kind share one statement,
// new customers of one turn one statement (one transaction where the workspace has AUTO segments); a value PostgreSQL
// refuses fails only its own request; racing checkouts create each new customer once (one event, its AUTO segments)
// and count each redemption against its own customer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertCustomersBySourceId } from '../../src/domains/customers/customer.service.js';
import { checkoutCustomerFinder, customerCreatedPayload, customerUpserter } from '../../src/domains/customers/index.js';
import { customerFactsLoader, loadCustomerFacts, type CustomerLookup } from '../../src/domains/segments/index.js';
import { findCustomerFactsMany } from '../../src/domains/segments/segment.queries.js';
import { createPool, withTransaction, type Pool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { startTestService, type TestService } from '../support/service.js';
import { lockWaiters } from '../support/row-lock.js';
import { until } from '../support/until.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

/**
 * A pool of its own on the test's database, counting the statements sent through it, those of them that create
 * customers in one statement (no transaction), and the clients taken out for transactions.
 */
function countingPool(): { pool: Pool; statements: () => number; oneStatementCreations: () => number; transactions: () => number } {
  const pool = createPool(service.db.url, { max: 4, log: createLogger('silent') });
  let statements = 0;
  let oneStatementCreations = 0;
  let transactions = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    statements += 1;
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
    if (text?.includes('INSERT INTO customers')) oneStatementCreations += 1;
    return query(...args);
  };
  // pool.query takes its client through connect(callback); a transaction calls connect() itself.
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
    if (args.length === 0) transactions += 1;
    return connect(...args);
  };
  return { pool, statements: () => statements, oneStatementCreations: () => oneStatementCreations, transactions: () => transactions };
}

async function eventsOf(workspaceId: string, type: string): Promise<Array<Record<string, string>>> {
  const { rows } = await service.pool.query<{ payload: Record<string, string> }>('SELECT payload FROM events WHERE workspace_id = $1 AND type = $2', [workspaceId, type]);
  return rows.map((r) => r.payload);
}

describe('customers at checkout', () => {
  // First in this file, while the customers table is nearly empty.
  it('reads only the customers asked for after the tables grew under a connection that looked them up while empty', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const segment = (await api.post('/api/v1/segments', { name: 'Everyone', type: 'STATIC' })).body;
    const client = await service.db.pool.connect();
    const seqRead = async (table: string) =>
      (await client.query<{ n: number }>('SELECT coalesce(seq_tup_read, 0)::int AS n FROM pg_stat_xact_user_tables WHERE relname = $1', [table])).rows[0]?.n ?? 0;
    const many = (refs: CustomerLookup[]) => findCustomerFactsMany(client, refs.map((ref) => ({ workspaceId, ref })));
    const kinds: Array<(i: number) => CustomerLookup> = [(i) => ({ sourceId: `s-${i}` }), (i) => ({ id: randomUUID().slice(0, 35) + (i % 10) }), (i) => ({ email: `e-${i}@x.test` })];
    try {
      // More than the five runs after which PostgreSQL may settle on a generic plan, a batch's worth each.
      for (let run = 0; run < 8; run++) for (const kind of kinds) expect((await many(Array.from({ length: 20 }, (_, i) => kind(run * 100 + i)))).every((f) => f === undefined)).toBe(true);
      await client.query(
        `WITH c AS (INSERT INTO customers (workspace_id, source_id, email) SELECT $1, 'grown-' || i, 'grown-' || i || '@x.test' FROM generate_series(1, 5000) AS i RETURNING id)
         INSERT INTO segment_members (workspace_id, segment_id, customer_id) SELECT $1, $2, id FROM c`,
        [workspaceId, segment.id],
      );
      const grown = (await client.query<{ id: string; source_id: string; email: string }>('SELECT id, source_id, email FROM customers WHERE workspace_id = $1 LIMIT 10', [workspaceId])).rows;
      for (const refs of [grown.map((c) => ({ sourceId: c.source_id })), grown.map((c) => ({ id: c.id })), grown.map((c) => ({ email: c.email }))]) {
        await client.query('BEGIN');
        const before = [await seqRead('customers'), await seqRead('segment_members')];
        const found = await many(refs);
        const read = [(await seqRead('customers')) - before[0]!, (await seqRead('segment_members')) - before[1]!];
        await client.query('COMMIT');
        expect(found.map((f) => f?.id)).toEqual(grown.map((c) => c.id));
        expect(found.every((f) => f!.segments.length === 1)).toBe(true);
        expect(read, JSON.stringify(refs[0])).toEqual([0, 0]);
      }
    } finally {
      client.release();
    }
  });

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
      const load = customerFactsLoader(pool);
      const together = await Promise.all(lookups.map((l) => load(l)));
      expect(together).toEqual(alone);
      expect(statements()).toBe(3);
      // A lone lookup in a turn of its own is one statement too.
      expect(await load({ workspaceId: a.workspaceId, ref: { sourceId: 'ada' } })).toEqual(alone[0]);
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
      const load = customerFactsLoader(pool);
      const answers = await Promise.allSettled([
        load({ workspaceId, ref: { id: ada.id } }),
        load({ workspaceId, ref: { id: 'not-a-uuid' } }),
        load({ workspaceId, ref: { id: randomUUID() } }),
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

  it('creates the new customers of one turn in one transaction, each once with its event and AUTO segments', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const gold = (await api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: { field: 'customer.metadata.tier', op: 'eq', value: 'gold' } })).body;
    await api.post('/api/v1/customers', { sourceId: 'known' });
    const { pool, transactions, oneStatementCreations } = countingPool();
    try {
      const names = ['new-1', 'new-2', 'new-3', 'new-1', 'known', 'new-4', 'new-2'];
      const upsert = customerUpserter(pool);
      const upserted = await Promise.all(names.map((sourceId, i) => upsert({ workspaceId, ref: { sourceId, metadata: { tier: i % 2 ? 'silver' : 'gold' } } })));
      const customers = upserted.map((u) => u!.customer);
      expect(transactions()).toBe(1);
      // Each created customer comes with the segments its creation put it in (a checkout reads it no more); a known one without.
      expect(upserted.map((u) => u!.segments)).toEqual([[gold.id], [], [gold.id], [gold.id], undefined, [], []]);
      expect(customers.map((c) => c!.sourceId)).toEqual(names);
      expect(customers[0]!.id).toBe(customers[3]!.id);
      expect(customers[1]!.id).toBe(customers[6]!.id);
      // The first reference of a new sourceId gives its fields (new-2 first came as the 2nd, silver); a known one keeps its own.
      expect(customers.map((c) => c!.metadata.tier)).toEqual(['gold', 'silver', 'gold', 'gold', undefined, 'silver', 'silver']);
      // The one statement was tried first and refused (the workspace has an AUTO segment); the next turn goes straight
      // to a transaction.
      expect(oneStatementCreations()).toBe(1);
      expect((await upsert({ workspaceId, ref: { sourceId: 'new-5', metadata: { tier: 'gold' } } }))!.segments).toEqual([gold.id]);
      expect([oneStatementCreations(), transactions()]).toEqual([1, 2]);
    } finally {
      await pool.end();
    }
    const created = await eventsOf(workspaceId, 'customer.created');
    expect(created.map((p) => p.sourceId).sort()).toEqual(['known', 'new-1', 'new-2', 'new-3', 'new-4', 'new-5']);
    const entered = await eventsOf(workspaceId, 'customer.segment.entered');
    const { rows } = await service.pool.query<{ source_id: string }>(
      'SELECT c.source_id FROM segment_members m JOIN customers c ON c.id = m.customer_id WHERE m.segment_id = $1 ORDER BY c.source_id',
      [gold.id],
    );
    expect(rows.map((r) => r.source_id)).toEqual(['new-1', 'new-3', 'new-5']);
    expect(entered).toHaveLength(3);
  });

  it('creates the new customers of a workspace without AUTO segments in one statement, each once with its customer.created event', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const { pool, statements, oneStatementCreations, transactions } = countingPool();
    try {
      const upsert = customerUpserter(pool);
      const refs = [
        { sourceId: 'one-1' },
        { sourceId: 'one-2', email: 'Two@Example.com', name: 'Two' },
        { sourceId: 'one-1', email: 'second@example.com' },
        { sourceId: 'one-3', metadata: { tier: 'gold' } },
      ];
      const upserted = await Promise.all(refs.map((ref) => upsert({ workspaceId, ref })));
      expect([statements(), oneStatementCreations(), transactions()]).toEqual([1, 1, 0]);
      // In no segment (the workspace has none), and the first reference of a sourceId gives its fields.
      expect(upserted.map((u) => u!.segments)).toEqual([[], [], [], []]);
      expect(upserted[2]!.customer).toEqual(upserted[0]!.customer);
      expect(upserted.map((u) => [u!.customer.sourceId, u!.customer.email, u!.customer.name, u!.customer.metadata])).toEqual([
        ['one-1', null, null, {}],
        ['one-2', 'Two@Example.com', 'Two', {}],
        ['one-1', null, null, {}],
        ['one-3', null, null, { tier: 'gold' }],
      ]);
      for (const u of upserted) expect((await api.get(`/api/v1/customers/${u!.customer.id}`)).body).toMatchObject({ sourceId: u!.customer.sourceId, email: u!.customer.email });
      const distinct = [upserted[0]!, upserted[1]!, upserted[3]!].map((u) => u.customer);
      // Time-ordered ids (uuidv7), the customers' and their events', so that a sale's inserts share the b-trees' right edge.
      const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
      for (const c of distinct) expect(c.id).toMatch(v7);
      const eventIds = await service.pool.query<{ id: string }>(`SELECT id FROM events WHERE workspace_id = $1 AND type = 'customer.created'`, [workspaceId]);
      for (const e of eventIds.rows) expect(e.id).toMatch(v7);
      const created = await eventsOf(workspaceId, 'customer.created');
      const bySource = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.sourceId).localeCompare(String(b.sourceId));
      expect(created.sort(bySource)).toEqual(distinct.map(customerCreatedPayload).sort(bySource));

      // A sourceId created meanwhile elsewhere is answered as it is (read in a transaction), the new one beside it created.
      const known = (await api.post('/api/v1/customers', { sourceId: 'known', email: 'known@example.com' })).body;
      const [again, fresh] = await Promise.all([upsert({ workspaceId, ref: { sourceId: 'known' } }), upsert({ workspaceId, ref: { sourceId: 'one-4' } })]);
      expect(again).toEqual({ customer: expect.objectContaining({ id: known.id, email: 'known@example.com' }) });
      expect(fresh).toMatchObject({ customer: { sourceId: 'one-4' }, segments: [] });
      expect([oneStatementCreations(), transactions()]).toEqual([2, 1]);
    } finally {
      await pool.end();
    }
    expect((await eventsOf(workspaceId, 'customer.created')).map((p) => p.sourceId).sort()).toEqual(['known', 'one-1', 'one-2', 'one-3', 'one-4']);
  });

  it('sees an AUTO segment that committed while its one statement waited for the segment computation, and puts the customer in it', async () => {
    const { workspaceId } = await service.newWorkspace();
    const { pool } = countingPool();
    // A segment computation of the workspace holds the membership lock exclusively; the statement waits for it.
    const holder = await service.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended('segment-membership:' || $1::text, 0))`, [workspaceId]);
      const creating = customerUpserter(pool)({ workspaceId, ref: { sourceId: 'late-gold', metadata: { tier: 'gold' } } });
      await until(async () => (await service.pool.query(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)).rows[0]!.n >= 1, 5_000, 'the creation waiting on the lock');
      // The computation's segment commits after the statement began: its snapshot does not hold it, the check must.
      const { rows } = await holder.query<{ id: string }>(`INSERT INTO segments (workspace_id, name, type, conditions) VALUES ($1, 'Gold', 'AUTO', $2) RETURNING id`, [
        workspaceId,
        JSON.stringify({ field: 'customer.metadata.tier', op: 'eq', value: 'gold' }),
      ]);
      await holder.query('COMMIT');
      const created = await creating;
      expect(created!.segments).toEqual([rows[0]!.id]);
      const members = await service.pool.query('SELECT customer_id FROM segment_members WHERE segment_id = $1', [rows[0]!.id]);
      expect(members.rows).toEqual([{ customer_id: created!.customer.id }]);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await pool.end();
    }
    expect(await eventsOf(workspaceId, 'customer.created')).toHaveLength(1);
    expect(await eventsOf(workspaceId, 'customer.segment.entered')).toHaveLength(1);
  });

  it('decides a new customer\'s redemption by the AUTO segments its creation put it in, without reading it again', async () => {
    const { api } = await service.newWorkspace();
    const vip = (await api.post('/api/v1/segments', { name: 'VIP', type: 'AUTO', conditions: { field: 'customer.metadata.tier', op: 'eq', value: 'gold' } })).body;
    const rule = (await api.post('/api/v1/validation-rules', { name: 'VIP only', conditions: { field: 'customer.segments', op: 'contains', value: vip.id } })).body;
    await api.post('/api/v1/vouchers', { code: 'VIP-ONLY', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', validationRuleIds: [rule.id] });
    const redeem = (sourceId: string, tier: string) =>
      api.post('/api/v1/vouchers/VIP-ONLY/redemption', { order: { amount: 1000, currency: 'EUR' }, customer: { sourceId, metadata: { tier } } });
    // Racing in one turn: the golds are created in one transaction, each taken into VIP, and redeem; the silvers do not.
    const answers = await Promise.all([...Array.from({ length: 6 }, (_, i) => redeem(`vip-${i}`, 'gold')), ...Array.from({ length: 4 }, (_, i) => redeem(`plain-${i}`, 'silver'))]);
    expect(answers.map((a) => a.body.ok)).toEqual([true, true, true, true, true, true, false, false, false, false]);
    // A returning gold customer, read as before.
    expect((await redeem('vip-0', 'gold')).body.ok).toBe(true);
  });

  it('fails only the new customer PostgreSQL refuses, the others of its turn created', async () => {
    const { workspaceId } = await service.newWorkspace();
    const { pool } = countingPool();
    try {
      const upsert = customerUpserter(pool);
      const answers = await Promise.allSettled(['fine-1', 'bad\u0000id', 'fine-2'].map((sourceId) => upsert({ workspaceId, ref: { sourceId } })));
      expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    } finally {
      await pool.end();
    }
    expect((await eventsOf(workspaceId, 'customer.created')).map((p) => p.sourceId).sort()).toEqual(['fine-1', 'fine-2']);
  });

  it('never deadlocks two turns creating the same new customers named in opposite orders', async () => {
    const { workspaceId } = await service.newWorkspace();
    // Large enough that the two inserts run at the same time: inserted in the order given, they deadlock.
    for (let round = 0; round < 4; round++) {
      const names = Array.from({ length: 1_000 }, (_, i) => `r${round}-${String(i).padStart(4, '0')}`);
      const [one, two] = await Promise.all(
        [names, [...names].reverse()].map((order) => withTransaction(service.pool, (tx) => upsertCustomersBySourceId(tx, order.map((sourceId) => ({ workspaceId, ref: { sourceId } }))))),
      );
      expect(new Set([...one!, ...two!].map((c) => c.customer.id)).size).toBe(1_000);
    }
    expect(await eventsOf(workspaceId, 'customer.created')).toHaveLength(4_000);
  });
  it('lets creations by when those out hang on a lock (another workspace\'s customers are created meanwhile)', async () => {
    const [a, b] = [await service.newWorkspace(), await service.newWorkspace()];
    const { pool, transactions, oneStatementCreations } = countingPool();
    const creationsOut = () => transactions() + oneStatementCreations();
    // Workspace a's AUTO segments being computed: its customer writes wait for this lock (segment-membership).
    const holder = await service.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended('segment-membership:' || $1::text, 0))`, [a.workspaceId]);
      const upsert = customerUpserter(pool);
      const waitingInA: Array<Promise<unknown>> = [];
      for (const sourceId of ['a-1', 'a-2']) {
        waitingInA.push(upsert({ workspaceId: a.workspaceId, ref: { sourceId } }));
        // Each in a turn of its own, and out (its statement waiting on the lock) before the next: the one out hangs, so
        // the next waits at most maxWaitMs (10 ms), then goes.
        await until(async () => (await service.pool.query(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)).rows[0]!.n >= waitingInA.length, 5_000, `${sourceId} waiting on the lock`);
      }
      expect(creationsOut()).toBe(2);
      // Both creations out and hung: b's goes as well, and is created while the lock holds.
      const started = Date.now();
      const inB = await Promise.race([upsert({ workspaceId: b.workspaceId, ref: { sourceId: 'b-1' } }), new Promise((resolve) => setTimeout(() => resolve('still held'), 5_000))]);
      expect(inB).toMatchObject({ customer: { sourceId: 'b-1' } });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(creationsOut()).toBe(3);
      await holder.query('COMMIT');
      const created = await Promise.all(waitingInA);
      expect(created.map((c) => (c as { customer: { sourceId: string } }).customer.sourceId)).toEqual(['a-1', 'a-2']);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await pool.end();
    }
    expect((await eventsOf(a.workspaceId, 'customer.created')).map((p) => p.sourceId).sort()).toEqual(['a-1', 'a-2']);
    expect((await eventsOf(b.workspaceId, 'customer.created')).map((p) => p.sourceId)).toEqual(['b-1']);
  });
  it('finds a turn’s returning customers and creates its new ones in one statement, each new one once with its customer.created', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const staticSegment = (await api.post('/api/v1/segments', { name: 'Picked', type: 'STATIC' })).body;
    const known = (await api.post('/api/v1/customers', { sourceId: 'back', email: 'back@example.com', metadata: { tier: 'gold' } })).body;
    await service.pool.query('INSERT INTO segment_members (workspace_id, segment_id, customer_id) VALUES ($1, $2, $3)', [workspaceId, staticSegment.id, known.id]);
    const { pool, statements, oneStatementCreations, transactions } = countingPool();
    try {
      const find = checkoutCustomerFinder(pool);
      const refs = [{ sourceId: 'back', metadata: { tier: 'ignored' } }, { sourceId: 'fresh-1', email: 'f1@example.com' }, { sourceId: 'fresh-1' }, { sourceId: 'fresh-2', metadata: { tier: 'silver' } }];
      const found = await Promise.all(refs.map((ref) => find({ workspaceId, ref })));
      expect([statements(), oneStatementCreations(), transactions()]).toEqual([1, 1, 0]);
      // The returning one as stored, with its segments; the new ones with the first reference's fields, in no segment.
      expect(found[0]).toMatchObject({ id: known.id, sourceId: 'back', email: 'back@example.com', metadata: { tier: 'gold' }, segments: [staticSegment.id] });
      expect(found[1]).toMatchObject({ sourceId: 'fresh-1', email: 'f1@example.com', metadata: {}, segments: [] });
      expect(found[2]).toEqual(found[1]);
      expect(found[3]).toMatchObject({ sourceId: 'fresh-2', email: null, metadata: { tier: 'silver' }, segments: [] });
      for (const f of found) expect((await api.get(`/api/v1/customers/${f!.id}`)).body).toMatchObject({ sourceId: f!.sourceId, email: f!.email });
      // A turn of returning customers only: one statement, nothing written.
      expect((await find({ workspaceId, ref: { sourceId: 'fresh-2' } }))!.id).toBe(found[3]!.id);
      expect(statements()).toBe(2);
    } finally {
      await pool.end();
    }
    expect((await eventsOf(workspaceId, 'customer.created')).map((p) => p.sourceId).sort()).toEqual(['back', 'fresh-1', 'fresh-2']);
  });

  it('leaves to the transaction what its one statement cannot answer: a creation in a workspace with AUTO segments, a sourceId being created elsewhere', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await api.post('/api/v1/customers', { sourceId: 'regular' });
    const { pool, statements } = countingPool();
    const holder = await service.pool.connect();
    try {
      const find = checkoutCustomerFinder(pool);
      // Another transaction is inserting 'racing' (uncommitted): the statement waits on it, then neither finds nor creates it.
      await holder.query('BEGIN');
      await holder.query(`INSERT INTO customers (workspace_id, id, source_id) VALUES ($1, $2, 'racing')`, [workspaceId, randomUUID()]);
      const both = Promise.all([find({ workspaceId, ref: { sourceId: 'racing' } }), find({ workspaceId, ref: { sourceId: 'beside' } })]);
      await until(async () => (await lockWaiters(service.pool)) >= 1, 5_000, 'the statement waiting on the insert');
      await holder.query('COMMIT');
      const [racing, beside] = await both;
      expect(racing).toBeUndefined();
      expect(beside).toMatchObject({ sourceId: 'beside', segments: [] });

      // With an AUTO segment: returning customers are still answered; a turn that would create is undone and answered
      // undefined, and the workspace's next turns are left to the transaction without a statement.
      await api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: { field: 'customer.metadata.tier', op: 'eq', value: 'gold' } });
      expect(await find({ workspaceId, ref: { sourceId: 'regular' } })).toMatchObject({ sourceId: 'regular' });
      const before = statements();
      expect(await Promise.all([find({ workspaceId, ref: { sourceId: 'regular' } }), find({ workspaceId, ref: { sourceId: 'gold-1', metadata: { tier: 'gold' } } })])).toEqual([undefined, undefined]);
      expect(await find({ workspaceId, ref: { sourceId: 'gold-2' } })).toBeUndefined();
      expect(statements()).toBe(before + 1);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await pool.end();
    }
    expect((await service.pool.query(`SELECT source_id FROM customers WHERE workspace_id = $1 ORDER BY source_id`, [workspaceId])).rows.map((r) => r.source_id)).toEqual(['beside', 'racing', 'regular']);
    // A redemption naming a new customer there is still created in the transaction, in the AUTO segment its metadata earns.
    const v = (await api.post('/api/v1/vouchers', { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' })).body;
    expect((await api.post(`/api/v1/vouchers/${v.code}/redemption`, { order: { amount: 1_000, currency: 'EUR' }, customer: { sourceId: 'gold-3', metadata: { tier: 'gold' } } })).body.ok).toBe(true);
    const { rows } = await service.pool.query(`SELECT c.source_id FROM segment_members m JOIN customers c ON c.id = m.customer_id WHERE m.workspace_id = $1`, [workspaceId]);
    expect(rows.map((r) => r.source_id)).toEqual(['gold-3']);
  });
});

