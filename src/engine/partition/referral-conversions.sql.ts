// Referral conversions in a batch's transaction: a redemption of a referral code by a referee records its conversion
// with it, and a rollback reverts it. The insert is guarded by the one-live-conversion-per-referee-and-program index:
// a referee converting through two codes at once (two partitions or processes) makes the later batch stale, and the
// partition decides again on the referee read anew (`referee_already_referred`).
import { preparedQuery, type Sql } from '../../platform/database.js';

export interface ConversionRow {
  workspaceId: string;
  id: string;
  programId: string;
  voucherId: string;
  code: string;
  referrerId: string;
  refereeId: string;
  orderId: string | null;
  redemptionId: string;
  status: 'PENDING' | 'CONFIRMED';
  createdAt: Date;
}

/** Inserts the conversions; false when a referee has a live conversion in the program already (nothing may commit). */
export async function insertConversions(tx: Sql, rows: readonly ConversionRow[]): Promise<boolean> {
  if (rows.length === 0) return true;
  const { rowCount } = await preparedQuery(
    tx,
    'engine.insertConversions',
    `INSERT INTO referral_conversions (workspace_id, id, program_id, voucher_id, code, referrer_customer_id, referee_customer_id,
                                       order_id, redemption_id, status, confirmed_at, created_at, updated_at)
     SELECT w, i, p, v, c, rr, re, o, r, s, CASE WHEN s = 'CONFIRMED' THEN t END, t, t
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::uuid[], $7::uuid[], $8::text[], $9::uuid[],
                   $10::text[], $11::timestamptz[]) AS x(w, i, p, v, c, rr, re, o, r, s, t)
     ON CONFLICT (workspace_id, program_id, referee_customer_id) WHERE status <> 'REVERTED' DO NOTHING`,
    [
      rows.map((r) => r.workspaceId),
      rows.map((r) => r.id),
      rows.map((r) => r.programId),
      rows.map((r) => r.voucherId),
      rows.map((r) => r.code),
      rows.map((r) => r.referrerId),
      rows.map((r) => r.refereeId),
      rows.map((r) => r.orderId),
      rows.map((r) => r.redemptionId),
      rows.map((r) => r.status),
      rows.map((r) => r.createdAt),
    ],
  );
  return rowCount === rows.length;
}

/** Reverts the conversions of rolled-back redemptions (for good: a paid order does not confirm them again). */
export async function revertConversions(tx: Sql, conversionIds: readonly string[]): Promise<void> {
  if (conversionIds.length === 0) return;
  // Planned at each call: a table that grows under load (see hot-path.sql.ts).
  await tx.query(
    `UPDATE referral_conversions SET status = 'REVERTED', reverted_by = 'ROLLBACK', reverted_at = now(), updated_at = now()
      WHERE id = ANY($1::uuid[]) AND status <> 'REVERTED'`,
    [conversionIds],
  );
}
