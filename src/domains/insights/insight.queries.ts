// The insights' SQL. Redemption figures come from redemption_rollups and refusals from refusal_counts (never from
// redemptions); budgets, gift cards and webhooks are read from their own tables through indexes per workspace. Sums
// saturate at 2^53-1, so a read never fails on a stored value.
import type { Sql } from '../../platform/database.js';
import { MAX_AMOUNT } from '../../contract/checkout.schemas.js';

const sum = (column: string, where?: string) => `least(coalesce(sum(${column})${where ? ` FILTER (WHERE ${where})` : ''}, 0), ${MAX_AMOUNT})::bigint`;

/**
 * The range widened to whole periods of `unit` in the workspace's zone: `lo` is the start of the period holding
 * `from`, `hi` the end of the one holding the last instant before `to`.
 */
const BOUNDS = `bounds AS (
  SELECT time_zone AS tz,
         date_trunc($2, $3::timestamptz AT TIME ZONE time_zone) AT TIME ZONE time_zone AS lo,
         (date_trunc($2, ($4::timestamptz - interval '1 microsecond') AT TIME ZONE time_zone) + ('1 ' || $2)::interval) AT TIME ZONE time_zone AS hi
    FROM workspaces WHERE workspace_id = $1
)`;

export interface Range {
  from: Date;
  to: Date;
}

export interface RedemptionPeriodRow {
  [column: string]: unknown;
  period: Date;
  currency: string;
  redemptions: number;
  rollbacks: number;
  discount_amount: number;
  gift_amount: number;
  rolled_back_discount: number;
  rolled_back_gift: number;
}

export async function sumRedemptionPeriods(db: Sql, workspaceId: string, interval: 'day' | 'hour', range: Range, campaignId: string | undefined) {
  const { rows } = await db.query<RedemptionPeriodRow>(
    `WITH ${BOUNDS}
     SELECT date_trunc($2, r.hour AT TIME ZONE b.tz) AT TIME ZONE b.tz AS period, r.currency,
            ${sum('r.redemptions')} AS redemptions, ${sum('r.rollbacks')} AS rollbacks,
            ${sum('r.discount_amount')} AS discount_amount, ${sum('r.gift_amount')} AS gift_amount,
            ${sum('r.rolled_back_discount')} AS rolled_back_discount, ${sum('r.rolled_back_gift')} AS rolled_back_gift
       FROM redemption_rollups r, bounds b
      WHERE r.workspace_id = $1 AND r.hour >= b.lo AND r.hour < b.hi
        AND ($5::uuid IS NULL OR r.campaign_id = $5::uuid)
      GROUP BY 1, 2
      ORDER BY 1, 2`,
    [workspaceId, interval, range.from, range.to, campaignId ?? null],
  );
  return rows;
}

export interface ReturnPeriodRow {
  [column: string]: unknown;
  period: Date;
  currency: string;
  returns: number;
  amount: number;
  discount: number;
  gift_credits: number;
  points_paid: number;
  points_earned: number;
}

/** What order returns gave back per period and currency, from order_return_rollups (added by order_returns' trigger). */
export async function sumReturnPeriods(db: Sql, workspaceId: string, interval: 'day' | 'hour', range: Range) {
  const { rows } = await db.query<ReturnPeriodRow>(
    `WITH ${BOUNDS}
     SELECT date_trunc($2, r.hour AT TIME ZONE b.tz) AT TIME ZONE b.tz AS period, r.currency,
            ${sum('r.returns')} AS returns, ${sum('r.amount')} AS amount, ${sum('r.discount')} AS discount,
            ${sum('r.gift_credits')} AS gift_credits, ${sum('r.points_paid')} AS points_paid, ${sum('r.points_earned')} AS points_earned
       FROM order_return_rollups r, bounds b
      WHERE r.workspace_id = $1 AND r.hour >= b.lo AND r.hour < b.hi
      GROUP BY 1, 2
      ORDER BY 1, 2`,
    [workspaceId, interval, range.from, range.to],
  );
  return rows;
}

export interface FailureRow {
  [column: string]: unknown;
  code: string;
  redemptions: number;
  stacks: number;
  validations: number;
}

export async function sumRefusals(db: Sql, workspaceId: string, range: Range, campaignId: string | undefined) {
  const { rows } = await db.query<FailureRow>(
    `SELECT code,
            ${sum('count', "source = 'redemption'")} AS redemptions,
            ${sum('count', "source = 'stack'")} AS stacks,
            ${sum('count', "source = 'validation'")} AS validations
       FROM refusal_counts
      WHERE workspace_id = $1 AND hour >= date_trunc('hour', $2::timestamptz) AND hour < $3::timestamptz
        AND ($4::uuid IS NULL OR campaign_id = $4::uuid)
      GROUP BY code`,
    [workspaceId, range.from, range.to, campaignId ?? null],
  );
  return rows;
}

export interface CampaignFiguresRow {
  [column: string]: unknown;
  campaign_id: string;
  name: string | null;
  currency: string;
  redemptions: number;
  discount_amount: number;
  gift_amount: number;
  rollbacks: number;
}

export async function topCampaigns(db: Sql, workspaceId: string, range: Range, limit: number) {
  const { rows } = await db.query<CampaignFiguresRow>(
    `WITH ${BOUNDS}, figures AS (
       SELECT r.campaign_id, r.currency, ${sum('r.redemptions')} AS redemptions, ${sum('r.discount_amount')} AS discount_amount,
              ${sum('r.gift_amount')} AS gift_amount, ${sum('r.rollbacks')} AS rollbacks
         FROM redemption_rollups r, bounds b
        WHERE r.workspace_id = $1 AND r.campaign_id IS NOT NULL AND r.hour >= b.lo AND r.hour < b.hi
        GROUP BY r.campaign_id, r.currency
        ORDER BY redemptions DESC, discount_amount DESC, r.campaign_id
        LIMIT $5)
     SELECT f.*, c.name FROM figures f LEFT JOIN campaigns c ON c.id = f.campaign_id AND c.workspace_id = $1
      ORDER BY f.redemptions DESC, f.discount_amount DESC, f.campaign_id`,
    [workspaceId, 'hour', range.from, range.to, limit],
  );
  return rows;
}

export interface BudgetedCampaignRow {
  [column: string]: unknown;
  id: string;
  name: string;
  active: boolean;
  budget: unknown;
  time_zone: string;
  day_ends: Date;
  week_ends: Date;
  month_ends: Date;
}

/** Budgeted campaigns (the 1,000 newest), with the ends of the current day, ISO week and month in the workspace's zone. */
export async function findBudgetedCampaigns(db: Sql, workspaceId: string) {
  const { rows } = await db.query<BudgetedCampaignRow>(
    `SELECT c.id, c.name, c.active, c.budget, w.time_zone,
            (date_trunc('day', now() AT TIME ZONE w.time_zone) + interval '1 day') AT TIME ZONE w.time_zone AS day_ends,
            (date_trunc('week', now() AT TIME ZONE w.time_zone) + interval '1 week') AT TIME ZONE w.time_zone AS week_ends,
            (date_trunc('month', now() AT TIME ZONE w.time_zone) + interval '1 month') AT TIME ZONE w.time_zone AS month_ends
       FROM campaigns c JOIN workspaces w ON w.workspace_id = c.workspace_id
      WHERE c.workspace_id = $1 AND c.budget IS NOT NULL
      ORDER BY c.created_at DESC, c.id DESC
      LIMIT 1000`,
    [workspaceId],
  );
  return rows;
}

export async function findBudgetUsage(db: Sql, workspaceId: string, campaignIds: readonly string[], periods: readonly string[]) {
  if (campaignIds.length === 0) return [];
  const { rows } = await db.query<{ campaign_id: string; period: string; redemptions: number; discount_amount: number }>(
    `SELECT campaign_id, period, redemptions, discount_amount FROM campaign_budget_usage
      WHERE workspace_id = $1 AND campaign_id = ANY($2::uuid[]) AND period = ANY($3::text[])`,
    [workspaceId, campaignIds, periods],
  );
  return rows;
}

export async function sumGiftBalances(db: Sql, workspaceId: string) {
  const { rows } = await db.query<{ currency: string | null; outstanding: number; cards: number; with_balance: number }>(
    `SELECT currency, ${sum('gift_balance')} AS outstanding, count(*)::bigint AS cards,
            count(*) FILTER (WHERE gift_balance > 0)::bigint AS with_balance
       FROM vouchers WHERE workspace_id = $1 AND type = 'GIFT_CARD'
      GROUP BY currency ORDER BY currency NULLS LAST`,
    [workspaceId],
  );
  return rows;
}

export async function webhookHealth(db: Sql, workspaceId: string) {
  const [byStatus, oldest, attempts] = await Promise.all([
    db.query<{ status: string; n: number }>(
      `SELECT status, count(*)::bigint AS n FROM webhook_deliveries WHERE workspace_id = $1 GROUP BY status`,
      [workspaceId],
    ),
    db.query<{ created_at: Date | null; age: number | null }>(
      `SELECT created_at, floor(extract(epoch FROM now() - created_at))::bigint AS age FROM webhook_deliveries
        WHERE workspace_id = $1 AND status IN ('pending', 'retry_scheduled') ORDER BY created_at LIMIT 1`,
      [workspaceId],
    ),
    db.query<{ attempts: number; succeeded: number }>(
      `SELECT count(*)::bigint AS attempts, count(*) FILTER (WHERE succeeded)::bigint AS succeeded
         FROM webhook_delivery_attempts WHERE workspace_id = $1 AND created_at >= now() - interval '24 hours'`,
      [workspaceId],
    ),
  ]);
  return { byStatus: byStatus.rows, oldest: oldest.rows[0], attempts: attempts.rows[0]! };
}

export interface ReferralFiguresRow {
  [column: string]: unknown;
  pending: number;
  confirmed: number;
  reverted: number;
  granted: number;
  failed: number;
  rewards_reverted: number;
}

/** Conversions made in the range (by the (workspace_id, created_at) index) and their rewards, by status now. */
export async function referralFigures(db: Sql, workspaceId: string, range: Range, programId: string | undefined): Promise<ReferralFiguresRow> {
  const { rows } = await db.query<ReferralFiguresRow>(
    `WITH c AS (
       SELECT id, status FROM referral_conversions
        WHERE workspace_id = $1 AND created_at >= $2 AND created_at < $3 AND ($4::uuid IS NULL OR program_id = $4)
     )
     SELECT (SELECT count(*) FROM c WHERE status = 'PENDING')::int AS pending,
            (SELECT count(*) FROM c WHERE status = 'CONFIRMED')::int AS confirmed,
            (SELECT count(*) FROM c WHERE status = 'REVERTED')::int AS reverted,
            count(*) FILTER (WHERE o.status = 'GRANTED')::int AS granted,
            count(*) FILTER (WHERE o.status = 'FAILED')::int AS failed,
            count(*) FILTER (WHERE o.status = 'REVERTED')::int AS rewards_reverted
       FROM c JOIN referral_outcomes o ON o.conversion_id = c.id`,
    [workspaceId, range.from, range.to, programId ?? null],
  );
  return rows[0]!;
}

export async function topReferrers(db: Sql, workspaceId: string, range: Range, programId: string | undefined, limit: number) {
  const { rows } = await db.query<{ customer_id: string; program_id: string; code: string; confirmed: number; pending: number }>(
    `SELECT referrer_customer_id AS customer_id, program_id, code,
            count(*) FILTER (WHERE status = 'CONFIRMED')::int AS confirmed, count(*) FILTER (WHERE status = 'PENDING')::int AS pending
       FROM referral_conversions
      WHERE workspace_id = $1 AND created_at >= $2 AND created_at < $3 AND ($4::uuid IS NULL OR program_id = $4) AND status <> 'REVERTED'
      GROUP BY referrer_customer_id, program_id, code
      ORDER BY confirmed DESC, pending DESC, code
      LIMIT $5`,
    [workspaceId, range.from, range.to, programId ?? null, limit],
  );
  return rows;
}

export interface LoyaltyPeriodRow {
  [column: string]: unknown;
  period: Date;
  earned: number;
  spent: number;
  refunded: number;
  expired: number;
  reversed: number;
  adjusted: number;
}

/** The workspace's loyalty programs (or the one asked in parameter `program`, when it is one of them). */
const programs = (program: string) => `programs AS (
  SELECT id FROM campaigns WHERE workspace_id = $1 AND type = 'LOYALTY_PROGRAM' AND (${program}::uuid IS NULL OR id = ${program}::uuid)
)`;

const signedSum = (column: string) => `greatest(least(coalesce(sum(${column}), 0), ${MAX_AMOUNT}), -${MAX_AMOUNT})::bigint`;

/**
 * Points moved per period, from loyalty_point_rollups (one row per hour, program and writing session, added by the
 * ledger's trigger): never a read of the ledger, so the cost follows the range's hours, not its entries.
 */
export async function sumLoyaltyPeriods(db: Sql, workspaceId: string, programId: string | undefined, interval: 'day' | 'hour', range: Range) {
  const { rows } = await db.query<LoyaltyPeriodRow>(
    `WITH ${BOUNDS}, ${programs('$5')}
     SELECT date_trunc($2, r.hour AT TIME ZONE b.tz) AT TIME ZONE b.tz AS period,
            ${sum('r.earned')} AS earned, ${sum('r.spent')} AS spent, ${sum('r.refunded')} AS refunded,
            ${sum('r.expired')} AS expired, ${sum('r.reversed')} AS reversed, ${signedSum('r.adjusted')} AS adjusted
       FROM loyalty_point_rollups r, bounds b
      WHERE r.workspace_id = $1 AND r.hour >= b.lo AND r.hour < b.hi AND r.program_id IN (SELECT id FROM programs)
      GROUP BY 1
      ORDER BY 1`,
    [workspaceId, interval, range.from, range.to, programId ?? null],
  );
  return rows;
}

export interface LoyaltyTierRow {
  [column: string]: unknown;
  tier_id: string | null;
  name: string | null;
  program_id: string | null;
  min_points: number | null;
  members: number;
  pending: number;
  outstanding: number;
}

/**
 * Members now, per tier (the tierless first, then each program's tiers from the lowest, empty ones too), with their
 * pending and held points. Reads the programs' cards through their partial index: the cost follows the members.
 */
export async function countLoyaltyMembers(db: Sql, workspaceId: string, programId: string | undefined) {
  const { rows } = await db.query<LoyaltyTierRow>(
    `WITH ${programs('$2')}, cards AS (
       SELECT v.loyalty_tier_id, count(*)::bigint AS members, ${sum('v.points_pending')} AS pending,
              ${sum('greatest(v.points_balance, 0)')} AS outstanding
         FROM vouchers v
        WHERE v.campaign_id IN (SELECT id FROM programs) AND v.type = 'LOYALTY_CARD'
        GROUP BY v.loyalty_tier_id
     )
     SELECT NULL::uuid AS tier_id, NULL::text AS name, NULL::uuid AS program_id, NULL::bigint AS min_points,
            coalesce(sum(c.members), 0)::bigint AS members, ${sum('c.pending')} AS pending, ${sum('c.outstanding')} AS outstanding
       FROM cards c LEFT JOIN loyalty_tiers t ON t.id = c.loyalty_tier_id
      WHERE t.id IS NULL
     UNION ALL
     SELECT t.id, t.name, t.program_id, t.min_points, coalesce(c.members, 0), coalesce(c.pending, 0), coalesce(c.outstanding, 0)
       FROM loyalty_tiers t LEFT JOIN cards c ON c.loyalty_tier_id = t.id
      WHERE t.workspace_id = $1 AND t.program_id IN (SELECT id FROM programs)
      ORDER BY program_id NULLS FIRST, min_points`,
    [workspaceId, programId ?? null],
  );
  return rows;
}
