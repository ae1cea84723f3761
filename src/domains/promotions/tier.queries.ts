// SQL of promotion tiers. A tier is a voucher row of kind TIER (code `tier:<id>`), so the redemption engine decides,
// counts and guards it like any code; these queries are the only ones that read or write such rows as tiers.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { uuidv7 } from '../../platform/ids.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import { presentFields } from '../../platform/partial-update.js';
import type { Discount } from '../../contract/discount.schemas.js';
import type { Schedule } from '../../contract/schedule.schemas.js';
import type { CreateTierBody, PromotionTier, UpdateTierBody } from './tier.schemas.js';
import { tierCode } from './tier.rules.js';

const COLUMNS = `id, campaign_id, name, discount, validation_rule_ids, priority, exclusive, active, schedule, max_discount,
  redemption_limit, per_customer_limit, redeemed_count, metadata, created_at, updated_at`;

interface TierRow {
  [column: string]: unknown;
  id: string;
  campaign_id: string;
  name: string | null;
  discount: Discount;
  validation_rule_ids: string[];
  priority: number | null;
  exclusive: boolean | null;
  active: boolean;
  schedule: Schedule | null;
  max_discount: string | null;
  redemption_limit: number | null;
  per_customer_limit: number | null;
  redeemed_count: number;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

function toTier(r: TierRow): PromotionTier {
  return {
    id: r.id,
    campaignId: r.campaign_id,
    name: r.name ?? '',
    discount: r.discount,
    validationRuleIds: r.validation_rule_ids,
    priority: r.priority,
    exclusive: r.exclusive,
    active: r.active,
    schedule: r.schedule,
    maxDiscount: r.max_discount === null ? null : Number(r.max_discount),
    redemption: { limit: r.redemption_limit, perCustomerLimit: r.per_customer_limit, redeemedCount: r.redeemed_count },
    metadata: r.metadata,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** The campaign's type, when it is in the workspace. */
export async function findCampaignType(db: Sql, workspaceId: string, campaignId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ type: string }>('SELECT type FROM campaigns WHERE workspace_id = $1 AND id = $2', [workspaceId, campaignId]);
  return rows[0]?.type;
}

export async function insertTier(db: Sql, workspaceId: string, campaignId: string, body: CreateTierBody): Promise<PromotionTier> {
  const id = uuidv7();
  const { rows } = await db.query<TierRow>(
    `INSERT INTO vouchers (workspace_id, id, code, campaign_id, type, kind, name, discount, validation_rule_ids, priority, exclusive,
                           active, schedule, max_discount, redemption_limit, per_customer_limit, metadata)
     VALUES ($1, $2, $3, $4, 'DISCOUNT', 'TIER', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     RETURNING ${COLUMNS}`,
    [
      workspaceId, id, tierCode(id), campaignId, body.name, JSON.stringify(body.discount), body.validationRuleIds, body.priority ?? null,
      body.exclusive ?? null, body.active, body.schedule ? JSON.stringify(body.schedule) : null, body.maxDiscount ?? null,
      body.redemptionLimit ?? null, body.perCustomerLimit ?? null, JSON.stringify(body.metadata),
    ],
  );
  return toTier(rows[0]!);
}

/** `forUpdate` locks the row until the transaction ends: the tier as it is before this transaction changes it. */
export async function findTier(db: Sql, workspaceId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<PromotionTier | undefined> {
  const { rows } = await db.query<TierRow>(
    `SELECT ${COLUMNS} FROM vouchers WHERE workspace_id = $1 AND id = $2 AND kind = 'TIER'${options.forUpdate ? ' FOR NO KEY UPDATE' : ''}`,
    [workspaceId, id],
  );
  return rows[0] && toTier(rows[0]);
}

export function listTiers(db: Sql, cursors: CursorCodec, workspaceId: string, campaignId: string, page: PageRequest) {
  return keysetPage<TierRow, PromotionTier>(
    db,
    cursors,
    {
      list: `promotions.tiers ${campaignId}`,
      from: 'vouchers',
      columns: COLUMNS,
      where: ['workspace_id = $1', 'campaign_id = $2', "kind = 'TIER'"],
      params: [workspaceId, campaignId],
      map: toTier,
    },
    page,
  );
}

/** Sets the fields present in the patch (`null` clears); the trigger bumps config_version, so the engine's guard sees it. */
export async function updateTier(db: Sql, workspaceId: string, id: string, patch: UpdateTierBody): Promise<PromotionTier | undefined> {
  const present = presentFields(patch);
  const { rows } = await db.query<TierRow>(
    `UPDATE vouchers SET
        name = CASE WHEN 'name' = ANY($3) THEN $4 ELSE name END,
        discount = CASE WHEN 'discount' = ANY($3) THEN $5::jsonb ELSE discount END,
        validation_rule_ids = CASE WHEN 'validationRuleIds' = ANY($3) THEN $6::uuid[] ELSE validation_rule_ids END,
        priority = CASE WHEN 'priority' = ANY($3) THEN $7::int ELSE priority END,
        exclusive = CASE WHEN 'exclusive' = ANY($3) THEN $8::boolean ELSE exclusive END,
        active = CASE WHEN 'active' = ANY($3) THEN $9::boolean ELSE active END,
        schedule = CASE WHEN 'schedule' = ANY($3) THEN $10::jsonb ELSE schedule END,
        max_discount = CASE WHEN 'maxDiscount' = ANY($3) THEN $11::bigint ELSE max_discount END,
        redemption_limit = CASE WHEN 'redemptionLimit' = ANY($3) THEN $12::int ELSE redemption_limit END,
        per_customer_limit = CASE WHEN 'perCustomerLimit' = ANY($3) THEN $13::int ELSE per_customer_limit END,
        metadata = CASE WHEN 'metadata' = ANY($3) THEN $14::jsonb ELSE metadata END,
        updated_at = now()
      WHERE workspace_id = $1 AND id = $2 AND kind = 'TIER'
      RETURNING ${COLUMNS}`,
    [
      workspaceId, id, present, patch.name ?? null, patch.discount ? JSON.stringify(patch.discount) : null, patch.validationRuleIds ?? null,
      patch.priority ?? null, patch.exclusive ?? null, patch.active ?? null, patch.schedule ? JSON.stringify(patch.schedule) : null,
      patch.maxDiscount ?? null, patch.redemptionLimit ?? null, patch.perCustomerLimit ?? null, patch.metadata ? JSON.stringify(patch.metadata) : null,
    ],
  );
  return rows[0] && toTier(rows[0]);
}

/** The tier as it was, or undefined when there is none. */
export async function deleteTier(db: Sql, workspaceId: string, id: string): Promise<PromotionTier | undefined> {
  const { rows } = await db.query<TierRow>(`DELETE FROM vouchers WHERE workspace_id = $1 AND id = $2 AND kind = 'TIER' RETURNING ${COLUMNS}`, [
    workspaceId,
    id,
  ]);
  return rows[0] && toTier(rows[0]);
}
