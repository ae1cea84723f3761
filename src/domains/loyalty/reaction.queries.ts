// SQL of the worker's reactions: the inbox of outbox events, what an order paid, the conditions of validation rules,
// the once-only earnings, custom events, and the buckets due for activation, expiry or an expiring notice. Orders,
// redemptions and validation rules are read here (never written): the owning domains export no such reads.
import type { Sql } from '../../platform/database.js';
import { takeInboxRow, type InboxRow } from '../../platform/inbox-loops.js';
import type { ConditionTree } from '../../contract/condition.schemas.js';

export type InboxEvent = InboxRow<'order.paid' | 'order.canceled' | 'customer.segment.entered'>;

/** Takes the oldest free row of loyalty's inbox (deleted in the caller's transaction). */
export function takeInboxEvent(tx: Sql): Promise<InboxEvent | undefined> {
  return takeInboxRow(tx, 'loyalty_event_inbox');
}

export interface PaidOrder {
  id: string;
  sourceId: string | null;
  status: string;
  amount: number;
  currency: string;
  items: Array<{ productId?: string; sku?: string; quantity: number; price: number }>;
  metadata: Record<string, unknown>;
  customerId: string | null;
  /** The order's amount less the discounts, gift credits and points of its successful redemptions, never below 0. */
  paid: number;
}

/** The order, locked against its own reactions (paid and canceled of one order take turns), with what was paid. */
export async function lockOrderForReaction(tx: Sql, workspaceId: string, orderId: string): Promise<PaidOrder | undefined> {
  const { rows } = await tx.query<{
    id: string;
    source_id: string | null;
    status: string;
    amount: number;
    currency: string;
    items: PaidOrder['items'];
    metadata: Record<string, unknown>;
    customer_id: string | null;
    redeemed: string;
  }>(
    `SELECT o.id, o.source_id, o.status, o.amount, o.currency, o.items, o.metadata, o.customer_id,
            (SELECT coalesce(sum(r.amount), 0)::text FROM redemptions r
              WHERE r.workspace_id = o.workspace_id AND r.status = 'SUCCEEDED'
                AND r.order_id IN (o.id::text, o.source_id)) AS redeemed
       FROM orders o WHERE o.workspace_id = $1 AND o.id = $2 FOR NO KEY UPDATE OF o`,
    [workspaceId, orderId],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    id: r.id,
    sourceId: r.source_id,
    status: r.status,
    amount: r.amount,
    currency: r.currency,
    items: r.items,
    metadata: r.metadata,
    customerId: r.customer_id,
    paid: Math.max(0, r.amount - Math.min(Number(r.redeemed), r.amount)),
  };
}

/** The condition trees of the given validation rules (rules deleted since are skipped). */
export async function findRuleConditions(db: Sql, workspaceId: string, ids: readonly string[]): Promise<Array<{ id: string; conditions: ConditionTree }>> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string; conditions: ConditionTree }>(
    'SELECT id, conditions FROM validation_rules WHERE workspace_id = $1 AND id = ANY($2::uuid[])',
    [workspaceId, ids],
  );
  return rows;
}

/** How often the member earned by the rule (the card is locked by the caller: the count holds until commit). */
export async function countEarnings(tx: Sql, memberId: string, ruleId: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM loyalty_earnings WHERE member_id = $1 AND earning_rule_id = $2', [memberId, ruleId]);
  return rows[0]!.n;
}

/** Which of the rules earned for this key before (the caller holds the lock that serializes the key's reactions). */
export async function findEarnedRules(tx: Sql, workspaceId: string, ruleIds: readonly string[], reactionKey: string): Promise<Set<string>> {
  const { rows } = await tx.query<{ earning_rule_id: string }>(
    'SELECT earning_rule_id FROM loyalty_earnings WHERE workspace_id = $1 AND earning_rule_id = ANY($2::uuid[]) AND reaction_key = $3',
    [workspaceId, ruleIds, reactionKey],
  );
  return new Set(rows.map((r) => r.earning_rule_id));
}

/** An order's earnings not reversed yet, pending ones first. */
export async function findOrderEarnings(tx: Sql, workspaceId: string, orderId: string): Promise<Array<{ id: string; programId: string; ruleId: string }>> {
  const { rows } = await tx.query<{ id: string; campaign_id: string; earning_rule_id: string }>(
    `SELECT e.id, v.campaign_id, e.earning_rule_id FROM loyalty_earnings e
       JOIN loyalty_point_buckets b ON b.id = e.bucket_id JOIN vouchers v ON v.id = e.member_id
      WHERE e.workspace_id = $1 AND e.order_id = $2 AND e.reversed_at IS NULL
      ORDER BY (b.status = 'PENDING') DESC, e.created_at, e.id`,
    [workspaceId, orderId],
  );
  return rows.map((r) => ({ id: r.id, programId: r.campaign_id, ruleId: r.earning_rule_id }));
}

export async function findProgramSettings(db: Sql, workspaceId: string, programId: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await db.query<{ loyalty: Record<string, unknown> | null }>(
    `SELECT loyalty FROM campaigns WHERE workspace_id = $1 AND id = $2 AND type = 'LOYALTY_PROGRAM'`,
    [workspaceId, programId],
  );
  return rows[0] ? (rows[0].loyalty ?? {}) : undefined;
}

export async function insertCustomEvent(
  tx: Sql,
  workspaceId: string,
  event: { name: string; customerId: string; metadata: Record<string, unknown>; referralCode: string | null },
): Promise<string> {
  const { rows } = await tx.query<{ id: string }>(
    'INSERT INTO custom_events (workspace_id, name, customer_id, metadata, referral_code) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [workspaceId, event.name, event.customerId, event.metadata, event.referralCode],
  );
  return rows[0]!.id;
}

export interface DueBucket {
  workspaceId: string;
  bucketId: string;
}

/** PENDING buckets whose activatesAt has come, oldest first (system sweep over every workspace). */
export async function findBucketsToActivate(db: Sql, limit: number): Promise<DueBucket[]> {
  const { rows } = await db.query<{ workspace_id: string; id: string }>(
    `SELECT workspace_id, id FROM loyalty_point_buckets WHERE status = 'PENDING' AND activates_at <= now() ORDER BY activates_at LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ workspaceId: r.workspace_id, bucketId: r.id }));
}

/** ACTIVE buckets past their expiresAt, oldest first (system sweep over every workspace). */
export async function findBucketsToExpire(db: Sql, limit: number): Promise<DueBucket[]> {
  const { rows } = await db.query<{ workspace_id: string; id: string }>(
    `SELECT workspace_id, id FROM loyalty_point_buckets WHERE status = 'ACTIVE' AND expires_at <= now() ORDER BY expires_at LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ workspaceId: r.workspace_id, bucketId: r.id }));
}

export interface ExpiringNotice {
  workspaceId: string;
  bucketId: string;
  memberId: string;
  points: number;
  expiresAt: Date;
}

/**
 * Marks ACTIVE buckets holding points that expire within their program's `expiration.notifyDaysBefore` (default 7)
 * as notified, once per bucket; SKIP LOCKED lets several workers share the sweep. Returns what to announce.
 */
export async function markExpiringBuckets(tx: Sql, limit: number): Promise<ExpiringNotice[]> {
  const { rows } = await tx.query<{ workspace_id: string; id: string; member_id: string; remaining: number; expires_at: Date }>(
    `WITH due AS (
       SELECT b.id FROM loyalty_point_buckets b
         JOIN vouchers v ON v.id = b.member_id JOIN campaigns c ON c.id = v.campaign_id
        WHERE b.status = 'ACTIVE' AND b.remaining > 0 AND b.expiring_notified_at IS NULL AND b.expires_at > now()
          AND b.expires_at <= now() + interval '365 days'
          AND coalesce((c.loyalty -> 'expiration' ->> 'notifyDaysBefore')::int, 7) > 0
          AND b.expires_at <= now() + make_interval(days => coalesce((c.loyalty -> 'expiration' ->> 'notifyDaysBefore')::int, 7))
        ORDER BY b.expires_at LIMIT $1 FOR UPDATE OF b SKIP LOCKED
     )
     UPDATE loyalty_point_buckets b SET expiring_notified_at = now() FROM due
      WHERE b.id = due.id AND b.expiring_notified_at IS NULL
     RETURNING b.workspace_id, b.id, b.member_id, b.remaining, b.expires_at`,
    [limit],
  );
  return rows.map((r) => ({ workspaceId: r.workspace_id, bucketId: r.id, memberId: r.member_id, points: r.remaining, expiresAt: r.expires_at }));
}
