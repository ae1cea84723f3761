// SQL of campaigns: parameterized, explicit columns, one row mapper.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { presentFields } from '../../platform/partial-update.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import type { Schedule } from '../../contract/schedule.schemas.js';
import type { VoucherTemplate } from '../../contract/voucher-template.schemas.js';
import type { PeriodUse } from './campaign-budget.rules.js';
import type { Budget } from '../../contract/budget.schemas.js';
import type { Campaign, CampaignType, CreateCampaignBody, UpdateCampaignBody } from './campaign.schemas.js';
import type { LoyaltySettings } from './loyalty-settings.schemas.js';
import type { ReferralSettings } from './referral-settings.schemas.js';

const COLUMN_NAMES = [
  'id', 'workspace_id', 'name', 'type', 'active', 'start_date', 'expiration_date', 'priority', 'exclusive', 'currency',
  'voucher_template', 'validation_rule_ids', 'schedule', 'budget', 'once_per_customer', 'loyalty', 'referral', 'metadata', 'created_at', 'updated_at',
];
const COLUMNS = COLUMN_NAMES.join(', ');
const UPDATED_COLUMNS = COLUMN_NAMES.map((column) => `c.${column}`).join(', ');

interface CampaignRow {
  [column: string]: unknown;
  id: string;
  workspace_id: string;
  name: string;
  type: CampaignType;
  active: boolean;
  start_date: Date | null;
  expiration_date: Date | null;
  priority: number;
  exclusive: boolean;
  currency: string | null;
  voucher_template: VoucherTemplate | null;
  validation_rule_ids: string[];
  schedule: Schedule | null;
  budget: Budget | null;
  once_per_customer: boolean;
  loyalty: LoyaltySettings | null;
  referral: ReferralSettings | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

function toCampaign(row: CampaignRow): Campaign {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    active: row.active,
    startDate: row.start_date?.toISOString() ?? null,
    expirationDate: row.expiration_date?.toISOString() ?? null,
    priority: row.priority,
    exclusive: row.exclusive,
    currency: row.currency,
    voucher: row.voucher_template,
    validationRuleIds: row.validation_rule_ids,
    schedule: row.schedule,
    budget: row.budget,
    oncePerCustomer: row.once_per_customer,
    ...(row.loyalty ? { loyalty: row.loyalty } : {}),
    ...(row.referral ? { referral: row.referral } : {}),
    metadata: row.metadata,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function insertCampaign(db: Sql, workspaceId: string, campaign: CreateCampaignBody): Promise<Campaign> {
  const { rows } = await db.query<CampaignRow>(
    `INSERT INTO campaigns (workspace_id, name, type, active, start_date, expiration_date, priority, exclusive, currency,
       voucher_template, validation_rule_ids, metadata, schedule, budget, once_per_customer, loyalty, referral)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING ${COLUMNS}`,
    [
      workspaceId,
      campaign.name,
      campaign.type,
      campaign.active,
      campaign.startDate ?? null,
      campaign.expirationDate ?? null,
      campaign.priority,
      campaign.exclusive,
      campaign.currency ?? null,
      campaign.voucher ?? null,
      campaign.validationRuleIds,
      campaign.metadata,
      campaign.schedule ?? null,
      campaign.budget ?? null,
      campaign.oncePerCustomer,
      campaign.loyalty ?? null,
      campaign.referral ?? null,
    ],
  );
  return toCampaign(rows[0]!);
}

export async function findCampaign(db: Sql, workspaceId: string, id: string): Promise<Campaign | undefined> {
  const { rows } = await db.query<CampaignRow>(`SELECT ${COLUMNS} FROM campaigns WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0] && toCampaign(rows[0]);
}

/** The campaign as it is before a change, locked until the caller's transaction ends (its audit entry's `before`). */
export async function lockCampaign(tx: Sql, workspaceId: string, id: string): Promise<Campaign | undefined> {
  const { rows } = await tx.query<CampaignRow>(
    `SELECT ${COLUMNS} FROM campaigns WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE`,
    [workspaceId, id],
  );
  return rows[0] && toCampaign(rows[0]);
}

/**
 * Applies the fields present in the patch ($3 names them). Undefined when the campaign is missing or the merged
 * dates are out of order: the caller tells the two apart.
 */
export async function updateCampaign(
  db: Sql,
  workspaceId: string,
  id: string,
  patch: Omit<UpdateCampaignBody, 'type'>,
): Promise<Campaign | undefined> {
  const present = presentFields(patch);
  const { rows } = await db.query<CampaignRow>(
    `WITH next AS (
       SELECT id,
         CASE WHEN 'name' = ANY($3) THEN $4::text ELSE name END AS name,
         CASE WHEN 'active' = ANY($3) THEN $5::boolean ELSE active END AS active,
         CASE WHEN 'startDate' = ANY($3) THEN $6::timestamptz ELSE start_date END AS start_date,
         CASE WHEN 'expirationDate' = ANY($3) THEN $7::timestamptz ELSE expiration_date END AS expiration_date,
         CASE WHEN 'priority' = ANY($3) THEN $8::int ELSE priority END AS priority,
         CASE WHEN 'exclusive' = ANY($3) THEN $9::boolean ELSE exclusive END AS exclusive,
         CASE WHEN 'currency' = ANY($3) THEN $10::text ELSE currency END AS currency,
         CASE WHEN 'voucher' = ANY($3) THEN $11::jsonb ELSE voucher_template END AS voucher_template,
         CASE WHEN 'validationRuleIds' = ANY($3) THEN $12::uuid[] ELSE validation_rule_ids END AS validation_rule_ids,
         CASE WHEN 'metadata' = ANY($3) THEN $13::jsonb ELSE metadata END AS metadata,
         CASE WHEN 'schedule' = ANY($3) THEN $14::jsonb ELSE schedule END AS schedule,
         CASE WHEN 'budget' = ANY($3) THEN $15::jsonb ELSE budget END AS budget,
         CASE WHEN 'oncePerCustomer' = ANY($3) THEN $16::boolean ELSE once_per_customer END AS once_per_customer,
         CASE WHEN 'loyalty' = ANY($3) THEN $17::jsonb ELSE loyalty END AS loyalty,
         CASE WHEN 'referral' = ANY($3) THEN $18::jsonb ELSE referral END AS referral
       FROM campaigns WHERE workspace_id = $1 AND id = $2 FOR UPDATE
     )
     UPDATE campaigns c SET name = n.name, active = n.active, start_date = n.start_date, expiration_date = n.expiration_date,
       priority = n.priority, exclusive = n.exclusive, currency = n.currency, voucher_template = n.voucher_template,
       validation_rule_ids = n.validation_rule_ids, metadata = n.metadata, schedule = n.schedule, budget = n.budget,
       once_per_customer = n.once_per_customer, loyalty = n.loyalty, referral = n.referral, updated_at = now()
     FROM next n
     WHERE c.id = n.id AND (n.start_date IS NULL OR n.expiration_date IS NULL OR n.start_date <= n.expiration_date)
     RETURNING ${UPDATED_COLUMNS}`,
    [
      workspaceId,
      id,
      present,
      patch.name ?? null,
      patch.active ?? null,
      patch.startDate ?? null,
      patch.expirationDate ?? null,
      patch.priority ?? null,
      patch.exclusive ?? null,
      patch.currency ?? null,
      patch.voucher ?? null,
      patch.validationRuleIds ?? null,
      patch.metadata ?? null,
      patch.schedule ?? null,
      patch.budget ?? null,
      patch.oncePerCustomer ?? null,
      patch.loyalty ?? null,
      patch.referral ?? null,
    ],
  );
  return rows[0] && toCampaign(rows[0]);
}

/** The budget usage rows of a campaign for the given period keys (absent periods have used nothing yet). */
export async function findBudgetUsage(db: Sql, workspaceId: string, campaignId: string, periods: string[]): Promise<Map<string, PeriodUse>> {
  const { rows } = await db.query<{ period: string; redemptions: number; discount_amount: number }>(
    `SELECT period, redemptions, discount_amount FROM campaign_budget_usage
     WHERE workspace_id = $1 AND campaign_id = $2 AND period = ANY($3::text[])`,
    [workspaceId, campaignId, periods],
  );
  return new Map(rows.map((row) => [row.period, { redemptions: row.redemptions, discountAmount: row.discount_amount }]));
}

/** The deleted campaign as it was, or undefined when there was none. */
export async function deleteCampaign(db: Sql, workspaceId: string, id: string): Promise<Campaign | undefined> {
  const { rows } = await db.query<CampaignRow>(`DELETE FROM campaigns WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [workspaceId, id]);
  return rows[0] && toCampaign(rows[0]);
}

export function listCampaigns(db: Sql, cursors: CursorCodec, workspaceId: string, page: PageRequest & { type?: CampaignType | undefined }) {
  const where = ['workspace_id = $1', ...(page.type ? ['type = $2'] : [])];
  const params = [workspaceId, ...(page.type ? [page.type] : [])];
  return keysetPage<CampaignRow, Campaign>(db, cursors, { list: 'campaigns.list', from: 'campaigns', columns: COLUMNS, where, params, map: toCampaign }, page);
}
