// The one SQL shape of a voucher snapshot (the row a decision reads), shared by the engine's loads and the
// qualification index: selected columns, joins, and the row mapper.
import type { Budget } from '../campaigns/campaign-budget.schemas.js';
import type { Schedule, ValidationRuleSnapshot } from '../rules/index.js';
import type { Discount } from '../vouchers/discount.schemas.js';
import type { CampaignSnapshot, VoucherSnapshot } from './redemption.rules.js';

export interface SnapshotRow {
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
  rules: ValidationRuleSnapshot[];
}

const ms = (d: Date | null) => (d ? d.getTime() : null);

export function toSnapshot(r: SnapshotRow): VoucherSnapshot {
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
            v.max_discount, v.customer_id, v.gift_balance, v.validation_rule_ids, v.config_version,
            v.kind, v.name, v.schedule, w.time_zone,
            c.active AS c_active, c.start_date AS c_start_date, c.expiration_date AS c_expiration_date,
            c.currency AS c_currency, c.priority AS c_priority, c.exclusive AS c_exclusive, c.version AS c_version,
            c.validation_rule_ids AS c_validation_rule_ids, c.schedule AS c_schedule, c.budget AS c_budget,
            CASE WHEN cardinality(v.validation_rule_ids) = 0 AND coalesce(cardinality(c.validation_rule_ids), 0) = 0
                 THEN '[]'::json
                 ELSE (SELECT coalesce(json_agg(json_build_object('id', r.id, 'name', r.name, 'conditions', r.conditions,
                                                                  'errorMessage', r.error_message, 'applicableTo', r.applicable_to)
                                                ORDER BY array_position(coalesce(c.validation_rule_ids, '{}') || v.validation_rule_ids, r.id)), '[]'::json)
                         FROM validation_rules r
                        WHERE r.workspace_id = v.workspace_id
                          AND r.id = ANY (coalesce(c.validation_rule_ids, '{}') || v.validation_rule_ids))
            END AS rules`;

export const SNAPSHOT_JOINS = `JOIN workspaces w ON w.workspace_id = v.workspace_id
       LEFT JOIN campaigns c ON c.id = v.campaign_id`;
