// The SQL guard behind validation sessions (schema/0016, 0037), on a real PostgreSQL: live reservations and uses of a
// voucher never pass its limit, whichever of a session write and a redemption commits first; and a voucher that never
// had a session is updated without the guard's PL/pgSQL being called at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolClient } from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
let workspaceId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  workspaceId = (await db.pool.query<{ id: string }>(`INSERT INTO workspaces (name) VALUES ('guard') RETURNING workspace_id AS id`)).rows[0]!.id;
});
afterAll(async () => db?.drop());

let codes = 0;
async function voucher(limit: number): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO vouchers (workspace_id, code, type, discount, redemption_limit)
     VALUES ($1, $2, 'DISCOUNT', '{"type":"PERCENT","percentOff":10}', $3) RETURNING id`,
    [workspaceId, `GUARD-${++codes}`, limit],
  );
  return rows[0]!.id;
}

/** As the engine writes a session: the voucher row locked first, then the reservation (one use, an hour long). */
const reserve = (client: PoolClient, id: string, key: string) =>
  client.query(
    `WITH locked AS MATERIALIZED (SELECT id FROM vouchers WHERE id = $2 FOR UPDATE)
     INSERT INTO voucher_sessions (workspace_id, voucher_id, key, expires_at)
     SELECT $1, id, $3, now() + interval '1 hour' FROM locked`,
    [workspaceId, id, key],
  );

/** As the engine takes a use: guarded by the limit alone; the reservations are the trigger's to check. */
const redeem = (client: PoolClient, id: string) =>
  client.query(`UPDATE vouchers SET redeemed_count = redeemed_count + 1 WHERE id = $1 AND redeemed_count + 1 <= redemption_limit`, [id]);

async function inTransaction(work: (client: PoolClient) => Promise<unknown>): Promise<boolean> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK');
    if (!/engine guard/.test((error as Error).message)) throw error;
    return false;
  } finally {
    client.release();
  }
}

describe('the reservation guard', () => {
  it('is not called for a voucher that never had a session, and is once it had one', async () => {
    const id = await voucher(10);
    const guardCalls = async (before?: (client: PoolClient) => Promise<unknown>) => {
      const client = await db.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`SET LOCAL track_functions = 'pl'`);
        await before?.(client);
        await redeem(client, id);
        const { rows } = await client.query<{ calls: string }>(
          `SELECT pg_stat_get_xact_function_calls('vouchers_within_reservations'::regproc) AS calls`,
        );
        await client.query('COMMIT');
        return Number(rows[0]!.calls);
      } finally {
        client.release();
      }
    };
    expect(await guardCalls()).toBe(0);
    await inTransaction((client) => reserve(client, id, 'checkout-1'));
    expect((await db.pool.query(`SELECT reserved_ever FROM vouchers WHERE id = $1`, [id])).rows[0].reserved_ever).toBe(true);
    expect(await guardCalls()).toBe(1);
  });

  it('refuses the use that a live reservation holds', async () => {
    const id = await voucher(1);
    expect(await inTransaction((client) => reserve(client, id, 'checkout-1'))).toBe(true);
    expect(await inTransaction((client) => redeem(client, id))).toBe(false);
    expect(await inTransaction((client) => reserve(client, id, 'checkout-2'))).toBe(false);
  });

  it('holds when sessions and redemptions race for the same voucher', async () => {
    const LIMIT = 5;
    for (let round = 0; round < 6; round++) {
      const id = await voucher(LIMIT);
      // 24 writers at once, on their own connections: sessions and redemptions interleaved.
      const outcomes = await Promise.all(
        Array.from({ length: 24 }, (_, i) => inTransaction((client) => (i % 2 === 0 ? reserve(client, id, `k${i}`) : redeem(client, id)))),
      );
      const { rows } = await db.pool.query<{ used: number; reserved: number }>(
        `SELECT v.redeemed_count AS used, (SELECT count(*)::int FROM voucher_sessions s WHERE s.voucher_id = v.id) AS reserved
           FROM vouchers v WHERE v.id = $1`,
        [id],
      );
      const { used, reserved } = rows[0]!;
      expect(used + reserved).toBeLessThanOrEqual(LIMIT);
      // Something was taken each round (never all refused), and what was granted is what the rows show.
      expect(used + reserved).toBeGreaterThan(0);
      expect(reserved).toBe(outcomes.filter((ok, i) => ok && i % 2 === 0).length);
    }
  });
});
