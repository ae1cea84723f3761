// The engine's reads: the hot state a partition decides on (vouchers with their campaigns, rules and live validation
// sessions; budget usage; per-customer uses) and redemptions to roll back; stored idempotency replies are read by
// platform/idempotency-keys.sql.ts. Writes: batch-commit.sql.ts. The lookups in tables that grow under load (keys,
// per-customer uses, redemptions, a referee's orders and conversions)
// are planned at each call (~0.1 ms), not prepared: a prepared statement settles, after five runs, on a generic plan
// made for the table as it was then, and one made while a table was nearly empty (a hash join over a sequential
// scan) read every row of it per batch as it grew, until an autovacuum's ANALYZE happened to replace it
// (test/redemptions/engine-lookups.test.ts shows it for each: 5,000 rows read for 10 asked).
import { preparedQuery, type Sql } from '../../platform/database.js';
import type { Budget } from '../../contract/budget.schemas.js';
import type { CampaignSnapshot, RuleSnapshot, VoucherSnapshot } from '../../contract/voucher-snapshot.schemas.js';
import type { Schedule } from '../../contract/schedule.schemas.js';
import type { Discount } from '../../contract/discount.schemas.js';

interface SnapshotRow {
  [column: string]: unknown;
  id: string;
  workspace_id: string;
  code: string;
  type: VoucherSnapshot['type'];
  campaign_id: string | null;
  discount: Discount | null;
  currency: string | null;
  active: boolean;
  start_date: Date | null;
  expiration_date: Date | null;
  redemption_limit: number | null;
  redeemed_count: number;
  per_customer_limit: number | null;
  priority: number | null;
  exclusive: boolean | null;
  max_discount: number | null;
  customer_id: string | null;
  gift_balance: number | null;
  points_balance: number;
  c_point_value: { points: number; amount: number } | null;
  referrer_customer_id: string | null;
  c_referral: { confirmOn: 'REDEMPTION' | 'ORDER_PAID'; refereeMustBeNew: boolean } | null;
  r_email: string | null;
  r_source_id: string | null;
  validation_rule_ids: string[];
  config_version: number;
  c_active: boolean | null;
  c_start_date: Date | null;
  c_expiration_date: Date | null;
  c_currency: string | null;
  c_priority: number | null;
  c_exclusive: boolean | null;
  c_version: number | null;
  c_validation_rule_ids: string[] | null;
  c_schedule: Schedule | null;
  c_budget: Budget | null;
  kind: 'CODE' | 'TIER';
  name: string | null;
  schedule: Schedule | null;
  time_zone: string;
  rules: RuleSnapshot[];
}

const ms = (d: Date | null) => (d ? d.getTime() : null);

function toSnapshot(r: SnapshotRow): VoucherSnapshot {
  const campaign: CampaignSnapshot | null =
    r.campaign_id && r.c_version !== null
      ? {
          id: r.campaign_id,
          active: r.c_active!,
          startDate: ms(r.c_start_date),
          expirationDate: ms(r.c_expiration_date),
          currency: r.c_currency,
          priority: r.c_priority!,
          exclusive: r.c_exclusive!,
          version: r.c_version,
          validationRuleIds: r.c_validation_rule_ids ?? [],
          schedule: r.c_schedule,
          budget: r.c_budget,
        }
      : null;
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    code: r.code,
    type: r.type,
    campaignId: r.campaign_id,
    discount: r.discount,
    currency: r.currency,
    active: r.active,
    startDate: ms(r.start_date),
    expirationDate: ms(r.expiration_date),
    redemptionLimit: r.redemption_limit,
    redeemedCount: r.redeemed_count,
    perCustomerLimit: r.per_customer_limit,
    priority: r.priority,
    exclusive: r.exclusive,
    maxDiscount: r.max_discount,
    customerId: r.customer_id,
    giftBalance: r.gift_balance,
    points: r.type === 'LOYALTY_CARD' ? { balance: r.points_balance, value: r.c_point_value } : null,
    referral:
      r.referrer_customer_id && r.c_referral && r.campaign_id
        ? {
            programId: r.campaign_id,
            referrerId: r.referrer_customer_id,
            referrerEmail: r.r_email,
            referrerSourceId: r.r_source_id,
            refereeMustBeNew: r.c_referral.refereeMustBeNew,
            confirmOn: r.c_referral.confirmOn,
          }
        : null,
    validationRuleIds: r.validation_rule_ids,
    configVersion: r.config_version,
    campaign,
    kind: r.kind,
    name: r.name,
    schedule: r.schedule,
    timeZone: r.time_zone,
    rules: r.rules,
  };
}


/**
 * What the engine (and the qualification index) know of a voucher: its row, its campaign, its workspace's time zone
 * and its rules (campaign's first, then its own), resolved in the same query so a decision never mixes old and new
 * rules of one voucher. Follow with `FROM ... vouchers v ...` and SNAPSHOT_JOINS.
 */
export const SNAPSHOT_SELECT = `SELECT v.id, v.workspace_id, v.code, v.type, v.campaign_id, v.discount, v.currency, v.active, v.start_date,
            v.expiration_date, v.redemption_limit, v.redeemed_count, v.per_customer_limit, v.priority, v.exclusive,
            v.max_discount, v.customer_id, v.gift_balance, v.points_balance, v.validation_rule_ids, v.config_version,
            v.kind, v.name, v.schedule, w.time_zone,
            c.active AS c_active, c.start_date AS c_start_date, c.expiration_date AS c_expiration_date,
            c.currency AS c_currency, c.priority AS c_priority, c.exclusive AS c_exclusive, c.version AS c_version,
            c.validation_rule_ids AS c_validation_rule_ids, c.schedule AS c_schedule, c.budget AS c_budget,
            c.loyalty->'payWithPoints'->'pointValue' AS c_point_value, v.referrer_customer_id, c.referral AS c_referral,
            rc.email AS r_email, rc.source_id AS r_source_id,
            CASE WHEN cardinality(v.validation_rule_ids) = 0 AND coalesce(cardinality(c.validation_rule_ids), 0) = 0
                 THEN '[]'::json
                 ELSE (SELECT coalesce(json_agg(json_build_object('id', r.id, 'name', r.name, 'conditions', r.conditions,
                                                                  'errorMessage', r.error_message, 'applicableTo', r.applicable_to)
                                                ORDER BY k.n), '[]'::json)
                         FROM unnest(coalesce(c.validation_rule_ids, '{}') || v.validation_rule_ids) WITH ORDINALITY AS k(id, n)
                         JOIN validation_rules r ON r.id = k.id AND r.workspace_id = v.workspace_id)
            END AS rules`;

export const SNAPSHOT_JOINS = `JOIN workspaces w ON w.workspace_id = v.workspace_id
       LEFT JOIN campaigns c ON c.id = v.campaign_id
       LEFT JOIN customers rc ON rc.id = v.referrer_customer_id AND rc.workspace_id = v.workspace_id`;

export interface VoucherKey {
  workspaceId: string;
  code: string;
}

/** A live reservation as loaded: session key, gift credits reserved, expiry in epoch ms. */
export type LoadedSession = [key: string, amount: number, expiresAt: number];

export interface LoadedVoucher {
  snapshot: VoucherSnapshot;
  sessions: LoadedSession[];
}

/**
 * The vouchers named (with their campaigns, rules and live validation sessions), in one query. Missing ones are
 * absent from the result.
 */
export async function loadSnapshots(db: Sql, keys: readonly VoucherKey[]): Promise<LoadedVoucher[]> {
  if (keys.length === 0) return [];
  const { rows } = await preparedQuery<SnapshotRow & { sessions: LoadedSession[] }>(db, 'engine.loadSnapshots.3',
    `${SNAPSHOT_SELECT},
            (SELECT coalesce(json_agg(json_build_array(s.key, s.amount, floor(extract(epoch FROM s.expires_at) * 1000))), '[]'::json)
               FROM voucher_sessions s WHERE s.voucher_id = v.id AND s.expires_at > now()) AS sessions
       FROM unnest($1::uuid[], $2::text[]) AS k(workspace_id, code)
       JOIN vouchers v ON v.workspace_id = k.workspace_id AND v.code = k.code
       ${SNAPSHOT_JOINS}`,
    [keys.map((k) => k.workspaceId), keys.map((k) => k.code)],
  );
  return rows.map((r) => ({ snapshot: toSnapshot(r), sessions: r.sessions }));
}

/** Deletes expired validation sessions, at most `limit`; returns how many went. Any process may run it any time. */
export async function pruneExpiredSessions(db: Sql, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM voucher_sessions WHERE ctid = ANY(ARRAY(SELECT ctid FROM voucher_sessions WHERE expires_at < now() LIMIT $1))`,
    [limit],
  );
  return rowCount ?? 0;
}

/** Every active promotion tier of a workspace, for its qualification index. */
export async function loadTierSnapshots(db: Sql, workspaceId: string): Promise<VoucherSnapshot[]> {
  const { rows } = await db.query<SnapshotRow>(
    `${SNAPSHOT_SELECT} FROM vouchers v ${SNAPSHOT_JOINS} WHERE v.workspace_id = $1 AND v.kind = 'TIER' AND v.active`,
    [workspaceId],
  );
  return rows.map(toSnapshot);
}

export interface BudgetUsage {
  campaignId: string;
  period: string;
  uses: number;
  amount: number;
}

/** What budgeted campaigns have used in the periods named. Periods without a row have used nothing. */
export async function loadBudgetUsage(db: Sql, campaignIds: readonly string[], periods: readonly string[]): Promise<BudgetUsage[]> {
  if (campaignIds.length === 0) return [];
  const { rows } = await preparedQuery<{ campaign_id: string; period: string; redemptions: number; discount_amount: string }>(db, 'engine.loadBudgetUsage.10',
    `SELECT campaign_id, period, redemptions, discount_amount FROM campaign_budget_usage
      WHERE campaign_id = ANY($1::uuid[]) AND period = ANY($2::text[])`,
    [campaignIds, periods],
  );
  return rows.map((r) => ({ campaignId: r.campaign_id, period: r.period, uses: r.redemptions, amount: Number(r.discount_amount) }));
}

export interface UsageKey {
  voucherId: string;
  customerId: string;
}

/**
 * A customer's uses of a voucher, as an SQL expression over the columns (or parameters) naming the workspace, voucher
 * and customer: its redemptions of the voucher not rolled back, counted from the redemptions themselves (the index by
 * customer; a customer's redemptions are few). What the partition loads and the batch statement's guard counts.
 */
export function customerUsesSql(workspace: string, voucher: string, customer: string): string {
  return `(SELECT count(*) FROM redemptions r
            WHERE r.workspace_id = ${workspace} AND r.customer_id = ${customer} AND r.voucher_id = ${voucher} AND r.status = 'SUCCEEDED')`;
}

/** The pairs' uses (customerUsesSql); a pair without any is absent (0 uses). */
export async function loadCustomerUses(db: Sql, keys: ReadonlyArray<UsageKey & { workspaceId: string }>): Promise<Array<UsageKey & { uses: number }>> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ voucher_id: string; customer_id: string; uses: number }>(
    `SELECT voucher_id, customer_id, uses
       FROM (SELECT k.voucher_id, k.customer_id, ${customerUsesSql('k.workspace_id', 'k.voucher_id', 'k.customer_id')}::int AS uses
               FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS k(workspace_id, voucher_id, customer_id)) u
      WHERE uses > 0`,
    [keys.map((k) => k.workspaceId), keys.map((k) => k.voucherId), keys.map((k) => k.customerId)],
  );
  return rows.map((r) => ({ voucherId: r.voucher_id, customerId: r.customer_id, uses: r.uses }));
}

/** A referee of a referral code: the customer and the code's program. */
export interface RefereeKey {
  workspaceId: string;
  customerId: string;
  programId: string;
}

/** What a referral decision reads of each referee: a paid order anywhere in the workspace, a live conversion in the program. */
export async function loadRefereeFacts(db: Sql, keys: readonly RefereeKey[]): Promise<Array<RefereeKey & { hasPaidOrder: boolean; referred: boolean }>> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ workspace_id: string; customer_id: string; program_id: string; paid: boolean; referred: boolean }>(
    `SELECT k.workspace_id, k.customer_id, k.program_id,
            EXISTS (SELECT 1 FROM orders o WHERE o.workspace_id = k.workspace_id AND o.customer_id = k.customer_id
                       AND o.status IN ('PAID', 'FULFILLED')) AS paid,
            EXISTS (SELECT 1 FROM referral_conversions c WHERE c.workspace_id = k.workspace_id AND c.program_id = k.program_id
                       AND c.referee_customer_id = k.customer_id AND c.status <> 'REVERTED') AS referred
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS k(workspace_id, customer_id, program_id)`,
    [keys.map((k) => k.workspaceId), keys.map((k) => k.customerId), keys.map((k) => k.programId)],
  );
  return rows.map((r) => ({ workspaceId: r.workspace_id, customerId: r.customer_id, programId: r.program_id, hasPaidOrder: r.paid, referred: r.referred }));
}

export interface StoredRedemption {
  id: string;
  workspaceId: string;
  voucherId: string;
  voucherCode: string;
  amount: number;
  kind: 'DISCOUNT' | 'GIFT' | 'POINTS';
  /** Points taken by a loyalty card (kind POINTS), given back by its rollback. */
  points: number | null;
  /** The live referral conversion the redemption made, reverted by its rollback. */
  conversion: { id: string; programId: string } | null;
  customerId: string | null;
  status: 'SUCCEEDED' | 'ROLLED_BACK';
  campaignId: string | null;
  /** The order's currency, else the voucher's: where its rollback's insight figures go. */
  currency: string | null;
  /** Gift credits given back by partial returns of its order: its rollback gives back only the rest. */
  returnedCredit: number;
  createdAt: Date;
}

export async function loadRedemptions(db: Sql, ids: readonly string[]): Promise<StoredRedemption[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ [k: string]: unknown; id: string; workspace_id: string; voucher_id: string; voucher_code: string; amount: number; kind: StoredRedemption['kind']; points: number | null; customer_id: string | null; status: 'SUCCEEDED' | 'ROLLED_BACK'; campaign_id: string | null; currency: string | null; returned_credit: number; created_at: Date; conversion_id: string | null; program_id: string | null }>(
    `SELECT r.id, r.workspace_id, r.voucher_id, r.voucher_code, r.amount, r.kind, r.points, r.customer_id, r.status, r.campaign_id, r.currency,
            r.returned_credit, r.created_at, rc.id AS conversion_id, rc.program_id
       FROM redemptions r LEFT JOIN referral_conversions rc ON rc.redemption_id = r.id AND rc.status <> 'REVERTED'
      WHERE r.id = ANY($1::uuid[])`,
    [ids],
  );
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    voucherId: r.voucher_id,
    voucherCode: r.voucher_code,
    amount: r.amount,
    kind: r.kind,
    points: r.points,
    conversion: r.conversion_id ? { id: r.conversion_id, programId: r.program_id! } : null,
    customerId: r.customer_id,
    status: r.status,
    campaignId: r.campaign_id,
    currency: r.currency,
    returnedCredit: r.returned_credit,
    createdAt: r.created_at,
  }));
}


