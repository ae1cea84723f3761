// What an order's return does to the points it earned: each earning recomputed on the paid amount that remains, with
// its rule and the multiplier it was earned at, and the difference taken back (pending points first, lifetime with
// them); nothing left paid takes the whole earning back. Members are placed in their tiers again (a drop emits
// loyalty.tier.changed). In the return's unit of work.
import type { Sql } from '../../platform/database.js';
import { earnedPoints } from './earning.rules.js';
import type { EarningPoints } from './earning-rule.schemas.js';
import { placeMember, type LoyaltyWork } from './member.service.js';
import { reverseEarning } from './points-ledger.queries.js';
import { findProgramSettings } from './reaction.queries.js';

interface OrderEarning {
  id: string;
  programId: string;
  ruleId: string;
  points: number;
  multiplier: bigint;
  rulePoints: EarningPoints | null;
}

/** An order's earnings not reversed yet, pending ones first, with their rule's points and their multiplier. */
async function findEarningsToRecompute(tx: Sql, workspaceId: string, orderId: string): Promise<OrderEarning[]> {
  const { rows } = await tx.query<{ id: string; campaign_id: string; earning_rule_id: string; points: number; multiplier: string | null; rule_points: EarningPoints | null }>(
    `SELECT e.id, v.campaign_id, e.earning_rule_id, e.points, e.multiplier::text AS multiplier, r.points AS rule_points
       FROM loyalty_earnings e
       JOIN loyalty_point_buckets b ON b.id = e.bucket_id JOIN vouchers v ON v.id = e.member_id
       LEFT JOIN loyalty_earning_rules r ON r.id = e.earning_rule_id
      WHERE e.workspace_id = $1 AND e.order_id = $2 AND e.reversed_at IS NULL
      ORDER BY (b.status = 'PENDING') DESC, e.created_at, e.id`,
    [workspaceId, orderId],
  );
  return rows.map((r) => ({
    id: r.id,
    programId: r.campaign_id,
    ruleId: r.earning_rule_id,
    points: r.points,
    multiplier: BigInt(r.multiplier ?? '10000'),
    rulePoints: r.rule_points,
  }));
}

/** Whether the order earned points a return would take back. */
export async function hasOrderEarnings(tx: Sql, workspaceId: string, orderId: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM loyalty_earnings WHERE workspace_id = $1 AND order_id = $2 AND reversed_at IS NULL LIMIT 1', [workspaceId, orderId]);
  return (rowCount ?? 0) > 0;
}

/** Records the multiplier an earning was made at (ten-thousandths), which its order's returns recompute with. */
export async function recordEarningMultiplier(tx: Sql, workspaceId: string, ruleId: string, reactionKey: string, multiplier: bigint): Promise<void> {
  await tx.query('UPDATE loyalty_earnings SET multiplier = $4 WHERE workspace_id = $1 AND earning_rule_id = $2 AND reaction_key = $3', [
    workspaceId,
    ruleId,
    reactionKey,
    multiplier.toString(),
  ]);
}

export interface PaidRemaining {
  /** What the order paid in money when it earned (order amount less every redemption). */
  paid: number;
  /** The share of it that remains after the return: `left` of `of`. */
  left: number;
  of: number;
}

/** floor(x × left / of) in exact integer arithmetic. */
const shareOf = (x: number, left: number, of: number) => (of <= 0 ? 0 : Number((BigInt(x) * BigInt(left)) / BigInt(of)));

/** Recomputes the order's earnings after a return; returns the points (active and pending) taken back. */
export async function reduceOrderEarnings(work: LoyaltyWork, workspaceId: string, orderId: string, remaining: PaidRemaining, source: { type: string; id: string }): Promise<number> {
  const { tx, emit } = work;
  const modes = new Map<string, 'TO_ZERO' | 'ALLOW_NEGATIVE'>();
  const members = new Set<string>();
  let taken = 0;
  for (const earning of await findEarningsToRecompute(tx, workspaceId, orderId)) {
    const paidLeft = shareOf(remaining.paid, remaining.left, remaining.of);
    const target =
      remaining.left <= 0 ? 0 : earning.rulePoints ? earnedPoints(earning.rulePoints, paidLeft, earning.multiplier) : shareOf(earning.points, remaining.left, remaining.of);
    const points = earning.points - Math.min(target, earning.points);
    if (points <= 0) continue;
    if (!modes.has(earning.programId)) {
      const reversal = ((await findProgramSettings(tx, workspaceId, earning.programId))?.reversal as { earned?: string } | undefined)?.earned;
      modes.set(earning.programId, reversal === 'ALLOW_NEGATIVE' ? 'ALLOW_NEGATIVE' : 'TO_ZERO');
    }
    const mode = modes.get(earning.programId)!;
    const done = target === 0 ? await reverseEarning(tx, workspaceId, earning.id, mode, source) : await reduceEarning(tx, workspaceId, earning.id, points, mode, source);
    if (!done) continue;
    taken += done.points + done.pendingPoints;
    members.add(done.memberId);
    emit('loyalty.points.reversed', {
      memberId: done.memberId,
      points: done.points,
      pendingPoints: done.pendingPoints,
      orderId,
      earningRuleId: earning.ruleId,
      entryId: done.entryId,
      balance: done.balanceAfter,
      reason: 'RETURN',
    });
  }
  for (const memberId of members) await placeMember(work, workspaceId, memberId);
  return taken;
}

async function reduceEarning(tx: Sql, workspaceId: string, earningId: string, points: number, mode: string, source: { type: string; id: string }) {
  const { rows } = await tx.query<{ entry_id: string; member_id: string; points: number; pending_points: number; balance_after: number }>(
    'SELECT * FROM loyalty_reduce_earning($1, $2, $3, $4, $5, $6)',
    [workspaceId, earningId, points, mode, source.type, source.id],
  );
  const r = rows[0];
  return r && { entryId: r.entry_id, memberId: r.member_id, points: r.points, pendingPoints: r.pending_points, balanceAfter: r.balance_after };
}
