// Pay with points in a batch: the debits are a part of the batch statement (its entries and bucket draws), the card's
// balance taken by the vouchers part under its guard; rollbacks give points back after the statement, in its
// transaction, through the ledger's own SQL function (schema/0018, 0074), which refills the buckets a debit drew from. A
// card's points have writers outside the engine (earning, rewards, transfers, jobs), so every move is guarded in SQL:
// a debit the balance does not cover makes the whole batch stale, and the partition decides again on the card read anew.
import type { Sql } from '../../platform/database.js';
import { columnOf, defineCommitPart } from './commit-part.js';

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
 * The batch statement's debits (after the vouchers part, which took each card's points off its balance under its
 * guard): an entry per redemption, in the batch's order, under the id its redemption row holds; the points drawn from
 * the card's ACTIVE buckets soonest expiry first, as loyalty_draw (schema/0018) orders them, one update per bucket; an
 * entry drawn from one bucket names it, one that spans buckets gets a draw row per bucket. Only the buckets the debits
 * reach are locked (the card's row is locked first, as every writer of points does). A bucket another transaction added
 * after the statement began is not seen: should the buckets then fall short of the debits, the guard names the vouchers
 * stale and the partition decides again on the card read anew.
 */
export const pointsPart = defineCommitPart({
  name: 'points',
  params: { workspaceIds: 'uuid[]', memberIds: 'uuid[]', redemptionIds: 'uuid[]', entryIds: 'uuid[]', points: 'bigint[]', orderIds: 'text[]' },
  rows: (w) => w.pointsDebits?.length ?? 0,
  values: (w) => {
    const debits = w.pointsDebits ?? [];
    return {
      workspaceIds: columnOf(debits, 'workspaceId'), memberIds: columnOf(debits, 'memberId'), redemptionIds: columnOf(debits, 'redemptionId'),
      entryIds: columnOf(debits, 'entryId'), points: columnOf(debits, 'points'), orderIds: columnOf(debits, 'orderId'),
    };
  },
  sql: (p) => ({
    // pts: each debit's span [upto - points, upto) of its card's total; pts_buckets: the buckets those spans reach, by
    // the balances the statement's snapshot shows, locked (FOR UPDATE gives their current remaining); pts_draws: the
    // overlap of each debit's span with each bucket's; pts_single: the debits drawn from one bucket, which their entry
    // names (bucket_id) instead of a draw row (schema/0074: loyalty_refund writes that row when it first gives back).
    cte: `pts AS (
  SELECT r.ws, r.card, r.id, r.entry, r.points, r.order_id, r.n,
         sum(r.points) OVER (PARTITION BY r.card ORDER BY r.n) AS upto, sum(r.points) OVER (PARTITION BY r.card) AS total
    FROM unnest(${p.workspaceIds}, ${p.memberIds}, ${p.redemptionIds}, ${p.entryIds}, ${p.points}, ${p.orderIds})
         WITH ORDINALITY AS r(ws, card, id, entry, points, order_id, n)
), pts_buckets AS (
  SELECT b.id, b.member_id, b.remaining, b.expires_at, b.created_at
    FROM loyalty_point_buckets b
   WHERE b.id IN (SELECT s.id
                    FROM (SELECT bk.id, bk.member_id,
                                 sum(bk.remaining) OVER (PARTITION BY bk.member_id ORDER BY bk.expires_at ASC NULLS LAST, bk.created_at, bk.id) - bk.remaining AS before
                            FROM loyalty_point_buckets bk
                           WHERE bk.member_id IN (SELECT id FROM upd) AND bk.status = 'ACTIVE' AND bk.remaining > 0) s
                    JOIN (SELECT DISTINCT card, total FROM pts) t ON t.card = s.member_id
                   WHERE s.before < t.total)
     AND b.status = 'ACTIVE' AND b.remaining > 0
   ORDER BY b.id
     FOR UPDATE
), pts_draws AS (
  SELECT e.ws, e.entry, b.id AS bucket, least(e.upto, b.upto) - greatest(e.upto - e.points, b.upto - b.remaining) AS taken
    FROM pts e
    JOIN (SELECT id, member_id, remaining,
                 sum(remaining) OVER (PARTITION BY member_id ORDER BY expires_at ASC NULLS LAST, created_at, id) AS upto
            FROM pts_buckets) b
      ON b.member_id = e.card AND b.upto - b.remaining < e.upto AND e.upto - e.points < b.upto
), pts_single AS (
  SELECT entry, (array_agg(bucket))[1] AS bucket FROM pts_draws GROUP BY entry HAVING count(*) = 1
), pts_entries AS (
  INSERT INTO loyalty_ledger_entries (workspace_id, id, member_id, type, amount, balance_after, source_type, source_id, order_id, bucket_id)
  SELECT pts.ws, pts.entry, pts.card, 'REDEMPTION', -pts.points, upd.points_balance + pts.total - pts.upto, 'redemption', pts.id::text, pts.order_id,
         single.bucket
    FROM pts JOIN upd ON upd.id = pts.card LEFT JOIN pts_single single ON single.entry = pts.entry
   ORDER BY pts.card, pts.n
  RETURNING 1
), pts_drawn AS (
  INSERT INTO loyalty_point_draws (workspace_id, entry_id, bucket_id, points)
  SELECT d.ws, d.entry, d.bucket, d.taken FROM pts_draws d WHERE NOT EXISTS (SELECT 1 FROM pts_single single WHERE single.entry = d.entry)
  RETURNING 1
), pts_taken AS (
  UPDATE loyalty_point_buckets b SET remaining = b.remaining - x.taken
    FROM (SELECT bucket, sum(taken) AS taken FROM pts_draws GROUP BY bucket) x
   WHERE b.id = x.bucket
  RETURNING b.id
)`,
    // Read after the vouchers part's guard (the card rows locked and debited first; see GUARD_ORDER).
    guard: `(SELECT count(*) FROM pts_entries) + (SELECT count(*) FROM pts_drawn) + (SELECT count(*) FROM pts_taken) < 0 THEN NULL
      WHEN (SELECT coalesce(sum(taken), 0) FROM pts_draws) <> (SELECT coalesce(sum(points), 0) FROM pts) THEN 'vouchers'`,
  }),
});

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
