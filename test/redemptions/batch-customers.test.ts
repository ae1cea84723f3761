// The customers single redemptions name by sourceId alone, found or created by the partition batch that decides them
// (engine/partition/batch-customers.ts), against a real PostgreSQL: a partition runtime on a pool of the test's own
// counts the statements; a value PostgreSQL refuses fails only its own redemption; over HTTP, a workspace with AUTO
// segments is answered on the web thread instead, and racing requests of one key create nothing twice.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';
import { sourceIdFinder } from '../../src/domains/customers/index.js';
import { checkoutCustomers } from '../../src/domains/redemptions/index.js';
import type { DeferredCustomer } from '../../src/contract/engine-port.js';
import { isCustomerUnresolved } from '../../src/engine/partition/batch-customers.js';
import { PartitionRuntime } from '../../src/engine/partition/partition-runtime.js';
import type { PartitionCall } from '../../src/engine/messages.js';
import { createPool, type Pool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { lockWaiters } from '../support/row-lock.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/until.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

const ORDER = { amount: 1000, currency: 'EUR' };

/** A pool on the test's database counting the find-or-create statements sent through it. */
function countingPool(): { pool: Pool; findOrCreates: () => number } {
  const pool = createPool(service.db.url, { max: 4, log: createLogger('silent') });
  let findOrCreates = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    if ((args[0] as { name?: string }).name === 'customers.find-or-create') findOrCreates += 1;
    return query(...args);
  };
  return { pool, findOrCreates: () => findOrCreates };
}

/**
 * A partition runtime of the test's own on `pool`, as a partition thread builds it, and a way to send it calls. Its
 * batches wait for their customers as long as it takes (a cold connection on a busy machine can take more than the
 * default's 100 ms, and the batch would send them back: a test of its answers wants them answered).
 */
function partitionOn(pool: Pool) {
  const runtime = new PartitionRuntime({ db: pool, log: createLogger('silent'), cacheSize: 100, cacheTtlMs: 60_000, maxBatch: 100, calendar: new ZoneCalendar(), customers: sourceIdFinder(), customersWaitMs: 30_000 });
  return (call: PartitionCall) => new Promise<unknown>((resolve, reject) => runtime.handle(call, resolve, reject));
}

const redeemCall = (workspaceId: string, code: string, sourceId: string): PartitionCall => ({
  type: 'redeem',
  workspaceId,
  code,
  order: ORDER,
  customer: { id: null, given: true, find: { sourceId } },
});

async function rows<T>(sql: string, params: unknown[]): Promise<T[]> {
  return (await service.pool.query(sql, params)).rows as T[];
}

describe('customers found or created by the batch that decides their redemptions', () => {
  it('finds and creates a batch\'s customers in one statement: a returning one with its segment, new ones once each', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const ada = (await api.post('/api/v1/customers', { sourceId: 'ada' })).body;
    const vip = (await api.post('/api/v1/segments', { name: 'VIP', type: 'STATIC', customerIds: [ada.id] })).body;
    const rule = (await api.post('/api/v1/validation-rules', { name: 'VIP only', conditions: { field: 'customer.segments', op: 'contains', value: vip.id } })).body;
    await api.post('/api/v1/vouchers', { code: 'VIP', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', validationRuleIds: [rule.id] });
    await api.post('/api/v1/vouchers', { code: 'PLAIN', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
    const { pool, findOrCreates } = countingPool();
    try {
      const send = partitionOn(pool);
      // Sent in one turn: one batch.
      const answers = (await Promise.all([
        send(redeemCall(workspaceId, 'PLAIN', 'new-1')),
        send(redeemCall(workspaceId, 'PLAIN', 'new-2')),
        send(redeemCall(workspaceId, 'PLAIN', 'new-1')),
        send(redeemCall(workspaceId, 'VIP', 'ada')),
        send(redeemCall(workspaceId, 'VIP', 'new-3')),
      ])) as Array<{ ok: boolean; code?: string }>;
      expect(answers.map((a) => a.ok)).toEqual([true, true, true, true, false]);
      expect(answers[4]!.code).toBe('validation_rule_failed');
      expect(findOrCreates()).toBe(1);
    } finally {
      await pool.end();
    }
    const customers = await rows<{ id: string; source_id: string }>('SELECT id, source_id FROM customers WHERE workspace_id = $1 ORDER BY source_id', [workspaceId]);
    expect(customers.map((c) => c.source_id)).toEqual(['ada', 'new-1', 'new-2', 'new-3']);
    const created = await rows<{ payload: { sourceId: string } }>(`SELECT payload FROM events WHERE workspace_id = $1 AND type = 'customer.created'`, [workspaceId]);
    expect(created.map((e) => e.payload.sourceId).sort()).toEqual(['ada', 'new-1', 'new-2', 'new-3']);
    // Each redemption counts against the customer it named: new-1's two against one customer.
    const redeemedBy = await rows<{ source_id: string; n: number }>(
      `SELECT c.source_id, count(*)::int AS n FROM redemptions r JOIN customers c ON c.id = r.customer_id WHERE r.workspace_id = $1 GROUP BY c.source_id ORDER BY c.source_id`,
      [workspaceId],
    );
    expect(redeemedBy).toEqual([{ source_id: 'ada', n: 1 }, { source_id: 'new-1', n: 2 }, { source_id: 'new-2', n: 1 }]);
  });

  it('leaves a workspace with AUTO segments to the web thread: nothing written by the batch, the service still segments the new customer, and resolves its next ones there', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const gold = (await api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: { field: 'customer.metadata.tier', op: 'eq', value: 'gold' } })).body;
    await api.post('/api/v1/vouchers', { code: 'AUTO', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
    const { pool, findOrCreates } = countingPool();
    try {
      const send = partitionOn(pool);
      expect(isCustomerUnresolved(await send(redeemCall(workspaceId, 'AUTO', 'gold-1')))).toBe(true);
      // Remembered: the next one sends no statement.
      expect(isCustomerUnresolved(await send(redeemCall(workspaceId, 'AUTO', 'gold-2')))).toBe(true);
      expect(findOrCreates()).toBe(1);
    } finally {
      await pool.end();
    }
    expect(await rows('SELECT 1 FROM customers WHERE workspace_id = $1', [workspaceId])).toHaveLength(0);
    expect(await rows('SELECT 1 FROM redemptions WHERE workspace_id = $1', [workspaceId])).toHaveLength(0);
    const answer = await api.post('/api/v1/vouchers/AUTO/redemption', { order: ORDER, customer: { sourceId: 'gold-1', metadata: { tier: 'gold' } } });
    expect(answer.status).toBe(200);
    expect(answer.body.ok).toBe(true);
    const members = await rows<{ source_id: string }>(
      'SELECT c.source_id FROM segment_members m JOIN customers c ON c.id = m.customer_id WHERE m.workspace_id = $1 AND m.segment_id = $2',
      [workspaceId, gold.id],
    );
    expect(members.map((m) => m.source_id)).toEqual(['gold-1']);
    // Once a batch sent one back, the workspace's next customers are resolved on the web thread for a while (not sent to
    // be sent back); another workspace's are still left to the batch.
    const customers = checkoutCustomers(service.pool);
    const first = await customers.redeemingOne(workspaceId, { sourceId: 'gold-2', metadata: { tier: 'gold' } });
    expect(first && 'resolve' in first).toBe(true);
    const resolved = await (first as DeferredCustomer).resolve();
    expect(resolved.facts?.segments).toEqual([gold.id]);
    const next = await customers.redeemingOne(workspaceId, { sourceId: 'gold-3', metadata: { tier: 'gold' } });
    expect(next && !('resolve' in next) && next.facts?.segments).toEqual([gold.id]);
    const elsewhere = await customers.redeemingOne((await service.newWorkspace()).workspaceId, { sourceId: 'gold-3' });
    expect(elsewhere && 'resolve' in elsewhere).toBe(true);
  });

  it('sends back a redemption whose customer another transaction is inserting, goes on meanwhile, and the web thread finds it committed', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await api.post('/api/v1/vouchers', { code: 'RACED', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
    // Cached first, so that the batch's only wait is the customers' statement.
    expect((await api.post('/api/v1/vouchers/RACED/validate', { order: ORDER })).body.valid).toBe(true);
    const holder = await service.pool.connect();
    const heldId = randomUUID();
    try {
      await holder.query('BEGIN');
      await holder.query(`INSERT INTO customers (workspace_id, id, source_id) VALUES ($1, $2, 'racing')`, [workspaceId, heldId]);
      const answers = Promise.all(['racing', 'beside'].map((sourceId) => api.post('/api/v1/vouchers/RACED/redemption', { order: ORDER, customer: { sourceId } })));
      // The batch's statement waits on the uncommitted insert; the batch does not: it sends both back after a moment
      // (the web thread's own statement for them waits too), and the partition goes on deciding while its statement
      // waits. A customer named meanwhile is resolved on the web thread (this workspace's were sent back lately), in a
      // statement of its own (a customer named in the same turn as 'racing' would share its wait).
      await until(async () => (await lockWaiters(service.pool)) >= 2, 5_000, 'the batch\'s statement and the web thread\'s waiting on the insert');
      const meanwhile = await Promise.all([
        api.post('/api/v1/vouchers/RACED/redemption', { order: ORDER }),
        api.post('/api/v1/vouchers/RACED/redemption', { order: ORDER, customer: { sourceId: 'meanwhile' } }),
      ]);
      expect(meanwhile.map((a) => a.body.ok)).toEqual([true, true]);
      expect(await lockWaiters(service.pool)).toBe(2);
      await holder.query('COMMIT');
      const [racing, beside] = await answers;
      expect([racing!.body.ok, beside!.body.ok]).toEqual([true, true]);
      const owners = await rows<{ source_id: string }>('SELECT c.source_id FROM redemptions r JOIN customers c ON c.id = r.customer_id WHERE r.id = $1', [racing!.body.redemption.id]);
      expect(owners).toEqual([{ source_id: 'racing' }]);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }
    const customers = await rows<{ id: string; source_id: string }>('SELECT id, source_id FROM customers WHERE workspace_id = $1 ORDER BY source_id', [workspaceId]);
    expect(customers).toEqual([{ id: customers[0]!.id, source_id: 'beside' }, { id: customers[1]!.id, source_id: 'meanwhile' }, { id: heldId, source_id: 'racing' }]);
  });

  it('fails only the redemption whose customer PostgreSQL refuses, the others of its batch redeemed', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await api.post('/api/v1/vouchers', { code: 'MANY', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
    const { pool, findOrCreates } = countingPool();
    try {
      const send = partitionOn(pool);
      // The service's input validation refuses a NUL before it reaches any statement; sent to the partition as is, it
      // fails the batch's find-or-create, and the batch's redemptions are then decided one by one.
      const answers = await Promise.allSettled(['fine-1', 'bad\u0000id', 'fine-2', 'fine-3'].map((s) => send(redeemCall(workspaceId, 'MANY', s))));
      expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect(answers.filter((a) => a.status === 'fulfilled').map((a) => (a.value as { ok: boolean }).ok)).toEqual([true, true, true]);
      expect((answers[1] as PromiseRejectedResult).reason).toMatchObject({ code: '22021' });
      expect(findOrCreates()).toBe(5);
    } finally {
      await pool.end();
    }
    const customers = await rows<{ source_id: string }>('SELECT source_id FROM customers WHERE workspace_id = $1 ORDER BY source_id', [workspaceId]);
    expect(customers.map((c) => c.source_id)).toEqual(['fine-1', 'fine-2', 'fine-3']);
    expect(await rows('SELECT 1 FROM redemptions WHERE workspace_id = $1', [workspaceId])).toHaveLength(3);
  });

  it('creates nothing twice for racing requests of one Idempotency-Key naming a new customer', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await api.post('/api/v1/vouchers', { code: 'KEYED', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
    const headers = { 'Idempotency-Key': randomUUID() };
    const replays = await Promise.all(Array.from({ length: 5 }, () => api.post('/api/v1/vouchers/KEYED/redemption', { order: ORDER, customer: { sourceId: 'keyed' } }, headers)));
    expect(replays.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(replays.map((a) => a.body.redemption.id)).size).toBe(1);
    expect(await rows('SELECT 1 FROM customers WHERE workspace_id = $1', [workspaceId])).toHaveLength(1);
    expect(await rows('SELECT 1 FROM redemptions WHERE workspace_id = $1', [workspaceId])).toHaveLength(1);
    expect(await rows(`SELECT 1 FROM events WHERE workspace_id = $1 AND type = 'customer.created'`, [workspaceId])).toHaveLength(1);
});
});
