// The engine's lookups in tables that grow under load (idempotency keys, per-customer uses counted from redemptions, redemptions to roll back,
// and the redemptions a points debit updates) read the rows asked for, however much the table grew since the connection first ran them; and a partition does not
// look keys up before a batch (the statement's key guard finds a used one). On a real PostgreSQL and a real service.
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCustomerUses, loadRedemptions } from '../../src/engine/partition/hot-path.sql.js';
import { findStoredReplies } from '../../src/platform/idempotency-keys.sql.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let api: ApiClient;
let workspaceId: string;
beforeAll(async () => {
  service = await startTestService();
  ({ api, workspaceId } = await service.newWorkspace());
});
afterAll(async () => service?.close());

const order = { amount: 10_000, currency: 'EUR' };

/**
 * Rows read by sequential scans of `table` in this connection since its statistics were last sent (PostgreSQL 15 keeps
 * a connection's counts a while before sending them): callers take the difference around a statement, in a transaction.
 */
const seqRead = async (client: PoolClient, table: string) =>
  (await client.query<{ n: number }>(`SELECT coalesce(seq_tup_read, 0)::int AS n FROM pg_stat_xact_user_tables WHERE relname = $1`, [table])).rows[0]?.n ?? 0;

describe('the engine\'s lookups and idempotency keys', () => {
  it('reads only the rows asked for after the tables grew under a connection that looked them up while they were empty', async () => {
    const client = await service.db.pool.connect();
    try {
      const ws = (await client.query<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('lookups') RETURNING workspace_id AS id`)).rows[0]!.id;
      const voucher = (
        await client.query<{ id: string }>(
          `INSERT INTO vouchers (workspace_id, code, type, discount) VALUES ($1, 'LOOKUPS', 'DISCOUNT', '{"type":"PERCENT","percentOff":10}') RETURNING id`,
          [ws],
        )
      ).rows[0]!.id;
      const cases = [
        {
          table: 'idempotency_keys',
          look: (n: number, i: number) => findStoredReplies(client, Array.from({ length: n }, (_, j) => ({ workspaceId: ws, key: `k-${i}-${j}` }))),
          grow: `INSERT INTO idempotency_keys (workspace_id, key, request_hash, response) SELECT $1, 'grown-' || i, 'h', '{}' FROM generate_series(1, 5000) AS i`,
          params: [ws],
          ask: async () => {
            const keys = (await client.query<{ key: string }>(`SELECT key FROM idempotency_keys WHERE workspace_id = $1 LIMIT 10`, [ws])).rows;
            return { lookup: () => findStoredReplies(client, keys.map((r) => ({ workspaceId: ws, key: r.key }))) };
          },
        },
        {
          // A customer's uses are counted from its redemptions of the voucher (the index by customer).
          table: 'redemptions',
          look: (n: number) => loadCustomerUses(client, Array.from({ length: n }, () => ({ workspaceId: ws, voucherId: voucher, customerId: randomUUID() }))),
          grow: `INSERT INTO redemptions (workspace_id, id, voucher_id, voucher_code, amount, kind, customer_id, status, metadata, created_at)
                 SELECT $1, gen_random_uuid(), $2, 'LOOKUPS', 1, 'DISCOUNT', gen_random_uuid(), 'SUCCEEDED', '{}', now() FROM generate_series(1, 5000)`,
          params: [ws, voucher],
          ask: async () => {
            const uses = (await client.query<{ customer_id: string }>(`SELECT customer_id FROM redemptions WHERE voucher_id = $1 AND customer_id IS NOT NULL LIMIT 10`, [voucher])).rows;
            return { lookup: () => loadCustomerUses(client, uses.map((r) => ({ workspaceId: ws, voucherId: voucher, customerId: r.customer_id }))) };
          },
        },
        {
          table: 'redemptions',
          look: (n: number) => loadRedemptions(client, Array.from({ length: n }, () => randomUUID())),
          grow: `INSERT INTO redemptions (workspace_id, id, voucher_id, voucher_code, amount, kind, status, metadata, created_at)
                 SELECT $1, gen_random_uuid(), $2, 'LOOKUPS', 1, 'DISCOUNT', 'SUCCEEDED', '{}', now() FROM generate_series(1, 5000)`,
          params: [ws, voucher],
          ask: async () => {
            const ids = (await client.query<{ id: string }>(`SELECT id FROM redemptions WHERE voucher_id = $1 LIMIT 10`, [voucher])).rows;
            return { lookup: () => loadRedemptions(client, ids.map((r) => r.id)) };
          },
        },
      ];
      for (const { table, look, grow, params, ask } of cases) {
        // More than the five runs after which PostgreSQL may settle on a generic plan for a prepared statement, each
        // with a batch's worth (with one row asked, a custom plan stays cheaper and is made again each time).
        for (let i = 0; i < 8; i++) expect(await look(20, i)).toEqual([]);
        await client.query(grow, params);
        const asked = await ask();
        await client.query('BEGIN');
        const before = await seqRead(client, table);
        const found = await asked.lookup();
        const read = (await seqRead(client, table)) - before;
        await client.query('COMMIT');
        expect(found, table).toHaveLength(10);
        // A plan made for the empty table (a hash join over a sequential scan) reads all 5,000 rows.
        expect(read, table).toBeLessThan(100);
      }
    } finally {
      client.release();
    }
  });

  it('answers a key it never saw from the store, refuses one used for another request, and commits the rest of the batch', async () => {
    const made = await api.post('/api/v1/vouchers', { code: `K-${randomUUID().slice(0, 12)}`, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', redemptionLimit: 100 });
    expect(made.status).toBe(201);
    const code = made.body.code as string;
    const redeem = (key: string) => api.post(`/api/v1/vouchers/${code}/redemption`, { order, idempotencyKey: key });
    const first = await redeem('first');
    expect(first.body).toMatchObject({ ok: true });
    // Keys no partition has seen: the first one's outcome stored under another key (the hash leaves the key out),
    // and a key stored for some other request.
    await service.pool.query(
      `INSERT INTO idempotency_keys (workspace_id, key, request_hash, response)
       SELECT workspace_id, 'copied', request_hash, response FROM idempotency_keys WHERE workspace_id = $1 AND key = 'first'`,
      [workspaceId],
    );
    await service.pool.query(`INSERT INTO idempotency_keys (workspace_id, key, request_hash, response) VALUES ($1, 'other', 'not this request', '{}')`, [workspaceId]);
    const fresh = Array.from({ length: 10 }, () => randomUUID());
    const [copied, other, ...rest] = await Promise.all([redeem('copied'), redeem('other'), ...fresh.map(redeem)]);
    expect(copied!.status).toBe(200);
    expect(copied!.body).toMatchObject({ ok: true, idempotent: true, redemption: { id: first.body.redemption.id } });
    expect(other!.status).toBe(409);
    expect(other!.body.code).toBe('idempotency_conflict');
    expect(rest.map((r) => r.body.ok)).toEqual(fresh.map(() => true));
    expect(new Set(rest.map((r) => r.body.redemption.id)).size).toBe(10);
    const { rows } = await service.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM redemptions WHERE voucher_code = $1`, [code]);
    expect(rows[0]!.n).toBe(11);
    // Replayed again, now from the partition's memory: the same outcome.
    expect((await redeem('copied')).body).toMatchObject({ idempotent: true, redemption: { id: first.body.redemption.id } });
  });
});
