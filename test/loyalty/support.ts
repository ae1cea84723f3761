// Loyalty test helpers: programs and members through the API, the worker's reactions and sweep run in-process, and
// the ledger invariant (caches == ledger == buckets) checked over a whole test database.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { reactToNextEvent } from '../../src/domains/loyalty/index.js';
import type { Pool } from '../../src/platform/database.js';
import type { ApiClient } from '../support/api-client.js';

export async function createProgram(api: ApiClient, loyalty: Record<string, unknown> = {}, name = 'Club'): Promise<string> {
  const program = await api.create('/api/v1/campaigns', { name, type: 'LOYALTY_PROGRAM', loyalty });
  return program.id;
}

export async function createCustomer(api: ApiClient, sourceId = `c-${randomBytes(4).toString('hex')}`): Promise<string> {
  const customer = await api.create('/api/v1/customers', { sourceId });
  return customer.id;
}

export async function joinMember(api: ApiClient, programId: string, customerId?: string): Promise<{ id: string; code: string; customerId: string }> {
  const id = customerId ?? (await createCustomer(api));
  return api.create(`/api/v1/loyalty/programs/${programId}/members`, { customer: { id } });
}

export async function addPoints(api: ApiClient, memberId: string, points: number, extra: Record<string, unknown> = {}) {
  const res = await api.post(`/api/v1/loyalty/members/${memberId}/points`, { points, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

export async function member(api: ApiClient, memberId: string) {
  const res = await api.get(`/api/v1/loyalty/members/${memberId}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

export async function transactions(api: ApiClient, memberId: string): Promise<any[]> {
  const entries: any[] = [];
  let cursor: string | undefined;
  do {
    const res = await api.get(`/api/v1/loyalty/members/${memberId}/transactions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    entries.push(...res.body.data);
    cursor = res.body.next;
  } while (cursor);
  return entries;
}

/** Runs the worker's reactions in-process until the inbox is empty; how many events were reacted to. */
export async function drainInbox(pool: Pool): Promise<number> {
  let n = 0;
  while (await reactToNextEvent(pool)) n++;
  return n;
}

/**
 * Every card of the database whose caches differ from its ledger (balance = sum of amount, pending = sum of
 * pendingAmount, lifetime = points of its earnings active and not reversed), or from its buckets (pending = PENDING remaining; ACTIVE remaining =
 * balance when it is not negative, 0 when it is); and every entry whose balanceAfter breaks the running sum.
 */
export async function ledgerMismatches(pool: Pool): Promise<unknown[]> {
  const { rows } = await pool.query(
    `WITH ledger AS (
       SELECT member_id, coalesce(sum(amount), 0)::bigint AS balance, coalesce(sum(pending_amount), 0)::bigint AS pending
         FROM loyalty_ledger_entries GROUP BY member_id
     ), buckets AS (
       SELECT member_id,
              coalesce(sum(remaining) FILTER (WHERE status = 'ACTIVE'), 0)::bigint AS active,
              coalesce(sum(remaining) FILTER (WHERE status = 'PENDING'), 0)::bigint AS pending
         FROM loyalty_point_buckets GROUP BY member_id
     ), lifetime AS (
       SELECT e.member_id, sum(e.points)::bigint AS earned
         FROM loyalty_earnings e JOIN loyalty_point_buckets b ON b.id = e.bucket_id
        WHERE e.reversed_at IS NULL AND b.status <> 'PENDING' GROUP BY e.member_id
     )
     SELECT v.id, v.points_balance, v.points_pending, v.points_lifetime, l.balance, l.pending, b.active, b.pending AS bucket_pending,
            lt.earned
       FROM vouchers v LEFT JOIN ledger l ON l.member_id = v.id LEFT JOIN buckets b ON b.member_id = v.id
       LEFT JOIN lifetime lt ON lt.member_id = v.id
      WHERE v.type = 'LOYALTY_CARD'
        AND (v.points_balance <> coalesce(l.balance, 0) OR v.points_pending <> coalesce(l.pending, 0)
             OR v.points_pending <> coalesce(b.pending, 0)
             OR coalesce(b.active, 0) <> GREATEST(v.points_balance, 0)
             OR v.points_lifetime <> coalesce(lt.earned, 0))`,
  );
  const running = await pool.query(
    `SELECT id, member_id FROM (
       SELECT id, member_id, balance_after, sum(amount) OVER (PARTITION BY member_id ORDER BY created_at, id) AS running
         FROM loyalty_ledger_entries) x
      WHERE balance_after <> running`,
  );
  return [...rows, ...running.rows.map((r) => ({ entryBreaksRunningSum: r }))];
}

export async function expectLedgerMatchesCaches(pool: Pool): Promise<void> {
  expect(await ledgerMismatches(pool)).toEqual([]);
}

/** Moves a bucket's clock: its activation or expiry becomes due now (tests cannot wait days). */
export async function makeDue(pool: Pool, memberId: string, column: 'activates_at' | 'expires_at'): Promise<number> {
  const { rowCount } = await pool.query(`UPDATE loyalty_point_buckets SET ${column} = now() - interval '1 second' WHERE member_id = $1 AND ${column} IS NOT NULL`, [memberId]);
  return rowCount ?? 0;
}
