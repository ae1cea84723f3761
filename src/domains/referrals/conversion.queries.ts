// SQL of the referral reactions: the inbox, and conversions confirmed or reverted by their order.
import type { Sql } from '../../platform/database.js';
import { takeInboxRow, type InboxRow } from '../../platform/inbox-loops.js';

export type ReferralInboxEvent = InboxRow<'order.paid' | 'order.canceled' | 'referral.conversion.confirmed' | 'referral.conversion.reverted'>;

/** Takes the oldest free row of the referral inbox (deleted in the caller's transaction). */
export function takeReferralEvent(tx: Sql): Promise<ReferralInboxEvent | undefined> {
  return takeInboxRow(tx, 'referral_event_inbox');
}

export interface ConversionChange {
  id: string;
  programId: string;
  code: string;
  referrerCustomerId: string;
  refereeCustomerId: string;
  orderId: string | null;
  redemptionId: string | null;
}

const RETURNING = 'RETURNING c.id, c.program_id, c.code, c.referrer_customer_id, c.referee_customer_id, c.order_id, c.redemption_id';

function toChange(r: Record<string, unknown>): ConversionChange {
  return {
    id: r.id as string,
    programId: r.program_id as string,
    code: r.code as string,
    referrerCustomerId: r.referrer_customer_id as string,
    refereeCustomerId: r.referee_customer_id as string,
    orderId: r.order_id as string | null,
    redemptionId: r.redemption_id as string | null,
  };
}

/**
 * The order's id and sourceId (a redemption names its order by either) and its status now, locked against the order's
 * other reaction: paid and canceled of one order take turns, whatever order the worker sees their events in.
 */
async function lockOrder(tx: Sql, workspaceId: string, orderId: string): Promise<{ keys: string[]; status: string } | undefined> {
  const { rows } = await tx.query<{ id: string; source_id: string | null; status: string }>(
    'SELECT id, source_id, status FROM orders WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE',
    [workspaceId, orderId],
  );
  const order = rows[0];
  return order && { keys: [order.id, ...(order.source_id !== null ? [order.source_id] : [])], status: order.status };
}

/**
 * An order paid: its pending conversions are confirmed, once (a replayed order.paid finds none pending). Nothing for
 * an order canceled since (CANCELED is final: its conversions stay reverted).
 */
export async function confirmOrderConversions(tx: Sql, workspaceId: string, orderId: string): Promise<ConversionChange[]> {
  const order = await lockOrder(tx, workspaceId, orderId);
  if (!order || (order.status !== 'PAID' && order.status !== 'FULFILLED')) return [];
  const { rows } = await tx.query(
    `UPDATE referral_conversions c SET status = 'CONFIRMED', confirmed_at = now(), updated_at = now()
      WHERE c.workspace_id = $1 AND c.order_id = ANY($2::text[]) AND c.status = 'PENDING'
     ${RETURNING}`,
    [workspaceId, order.keys],
  );
  return rows.map(toChange);
}

/** An order canceled: its pending and confirmed conversions are reverted. */
export async function revertOrderConversions(tx: Sql, workspaceId: string, orderId: string): Promise<ConversionChange[]> {
  const order = await lockOrder(tx, workspaceId, orderId);
  if (!order) return [];
  const keys = order.keys;
  const { rows } = await tx.query(
    `UPDATE referral_conversions c SET status = 'REVERTED', reverted_by = 'ORDER_CANCELED', reverted_at = now(), updated_at = now()
      WHERE c.workspace_id = $1 AND c.order_id = ANY($2::text[]) AND c.status <> 'REVERTED'
     ${RETURNING}`,
    [workspaceId, keys],
  );
  return rows.map(toChange);
}

export interface ConversionForRewards {
  id: string;
  status: 'PENDING' | 'CONFIRMED' | 'REVERTED';
  referrerCustomerId: string;
  refereeCustomerId: string;
  referrerRewards: Array<{ rewardId: string }>;
  refereeRewardId: string | null;
}

/** The conversion (locked) and its program's rewards, for granting or taking them back. */
export async function lockConversionForRewards(tx: Sql, workspaceId: string, id: string): Promise<ConversionForRewards | undefined> {
  const { rows } = await tx.query<{ id: string; status: ConversionForRewards['status']; referrer_customer_id: string; referee_customer_id: string; referral: { referrerRewards?: Array<{ rewardId: string }>; refereeRewardId?: string } | null }>(
    `SELECT c.id, c.status, c.referrer_customer_id, c.referee_customer_id, p.referral
       FROM referral_conversions c JOIN campaigns p ON p.id = c.program_id
      WHERE c.workspace_id = $1 AND c.id = $2 FOR UPDATE OF c`,
    [workspaceId, id],
  );
  const r = rows[0];
  return (
    r && {
      id: r.id,
      status: r.status,
      referrerCustomerId: r.referrer_customer_id,
      refereeCustomerId: r.referee_customer_id,
      referrerRewards: r.referral?.referrerRewards ?? [],
      refereeRewardId: r.referral?.refereeRewardId ?? null,
    }
  );
}

/** Claims an outcome (conversion, side, reward) once: false when it exists (granted before, whatever happened since). */
export async function claimOutcome(tx: Sql, workspaceId: string, conversionId: string, side: 'REFERRER' | 'REFEREE', rewardId: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO referral_outcomes (workspace_id, conversion_id, side, reward_id, status) VALUES ($1, $2, $3, $4, 'PENDING') ON CONFLICT DO NOTHING`,
    [workspaceId, conversionId, side, rewardId],
  );
  return rowCount === 1;
}

export async function settleOutcome(
  tx: Sql,
  conversionId: string,
  side: 'REFERRER' | 'REFEREE',
  rewardId: string,
  status: 'GRANTED' | 'FAILED' | 'REVERTED',
  issued: Record<string, unknown> | null,
  detail: string | null,
): Promise<void> {
  await tx.query(
    `UPDATE referral_outcomes SET status = $4, issued = coalesce($5, issued), detail = $6, updated_at = now()
      WHERE conversion_id = $1 AND side = $2 AND reward_id = $3`,
    [conversionId, side, rewardId, status, issued, detail],
  );
}

export interface GrantedOutcome {
  side: 'REFERRER' | 'REFEREE';
  rewardId: string;
  issued: Record<string, unknown> | null;
}

export async function grantedOutcomes(tx: Sql, conversionId: string): Promise<GrantedOutcome[]> {
  const { rows } = await tx.query<{ side: GrantedOutcome['side']; reward_id: string; issued: Record<string, unknown> | null }>(
    `SELECT side, reward_id, issued FROM referral_outcomes WHERE conversion_id = $1 AND status = 'GRANTED' ORDER BY side DESC, reward_id FOR UPDATE`,
    [conversionId],
  );
  return rows.map((r) => ({ side: r.side, rewardId: r.reward_id, issued: r.issued }));
}
