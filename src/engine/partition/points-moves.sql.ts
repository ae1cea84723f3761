// Pay with points in a batch's transaction: after the batch statement has inserted the redemptions (and marked the
// rollbacks), loyalty cards are debited and given back through the ledger's own SQL functions (schema/0018), which
// lock the card, draw or refill its buckets and append the entries. A card's points have writers outside the engine
// (earning, rewards, transfers, jobs), so the debit is guarded in SQL: a debit the balance does not cover makes the
// whole batch stale, and the partition decides again on the card read anew.
import type { Sql } from '../../platform/database.js';

/**
 * A loyalty card paying a redemption: `points` debited under the redemption, in the ledger entry `entryId` (the id the
 * redemption row was inserted with).
 */
export interface PointsDebit {
  workspaceId: string;
  memberId: string;
  redemptionId: string;
  entryId: string;
  points: number;
  orderId: string | null;
}

/** A rollback of a redemption paid with points: the points go back into the buckets the debit drew from. */
export interface PointsRefund {
  workspaceId: string;
  redemptionId: string;
  rollbackId: string;
}

/**
 * Debits every card; false when one balance did not cover its points (nothing then may commit). A card paying several
 * redemptions of the batch is debited once for all of them (loyalty_debit_many_as: one update of the card and of each
 * bucket, an entry per redemption under the id its redemption row already holds), cards in id order.
 */
export async function debitPoints(tx: Sql, debits: readonly PointsDebit[]): Promise<boolean> {
  if (debits.length === 0) return true;
  // Planned at each call, not prepared, as the engine's other lookups in growing tables (see hot-path.sql.ts).
  const { rows } = await tx.query<{ n: number }>(
    `WITH r AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::bigint[], $6::text[]) WITH ORDINALITY AS r(ws, card, id, entry, points, order_id, n)
     ), cards AS (
       SELECT ws, card, array_agg(entry ORDER BY n) AS entries, array_agg(points ORDER BY n) AS points,
              array_agg(id::text ORDER BY n) AS sources, array_agg(order_id ORDER BY n) AS orders
         FROM r GROUP BY ws, card ORDER BY card
     )
     SELECT count(*)::int AS n
       FROM cards c
       CROSS JOIN LATERAL loyalty_debit_many_as(c.ws, c.card, c.entries, c.points, 'REDEMPTION', 'redemption', c.sources, c.orders, NULL) AS x`,
    [
      debits.map((d) => d.workspaceId),
      debits.map((d) => d.memberId),
      debits.map((d) => d.redemptionId),
      debits.map((d) => d.entryId),
      debits.map((d) => d.points),
      debits.map((d) => d.orderId),
    ],
  );
  return rows[0]!.n === debits.length;
}

/** Gives back the points of rolled-back redemptions (all that was not given back yet). */
export async function refundPoints(tx: Sql, refunds: readonly PointsRefund[]): Promise<void> {
  if (refunds.length === 0) return;
  await tx.query(
    `SELECT x.entry_id
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) WITH ORDINALITY AS r(ws, id, rollback_id, n)
       JOIN redemptions red ON red.id = r.id AND red.workspace_id = r.ws AND red.points_entry_id IS NOT NULL
       CROSS JOIN LATERAL loyalty_refund(r.ws, red.points_entry_id, 'ROLLBACK', 'rollback', r.rollback_id::text, NULL) AS x
      ORDER BY r.n`,
    [refunds.map((r) => r.workspaceId), refunds.map((r) => r.redemptionId), refunds.map((r) => r.rollbackId)],
  );
}
