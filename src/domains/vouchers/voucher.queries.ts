// SQL of vouchers and their gift ledger: parameterized, explicit columns, one row mapper. Rows of kind TIER (automatic
// promotion tiers, coded `tier:<id>`) belong to the tiers feature: every read and write here is limited to kind CODE.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { presentFields } from '../../platform/partial-update.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import type { Schedule } from '../../contract/schedule.schemas.js';
import type { Discount } from '../../contract/discount.schemas.js';
import type { VoucherFields } from '../../checkout/voucher-template.rules.js';
import type { UpdateVoucherBody, Voucher } from './voucher.schemas.js';
import type { VoucherType } from '../../contract/voucher-template.schemas.js';

const COLUMN_NAMES = [
  'id', 'workspace_id', 'code', 'campaign_id', 'type', 'discount', 'currency', 'active', 'start_date', 'expiration_date',
  'redemption_limit', 'redeemed_count', 'per_customer_limit', 'priority', 'exclusive', 'max_discount', 'customer_id',
  'gift_amount', 'gift_balance', 'validation_rule_ids', 'schedule', 'metadata', 'created_at', 'updated_at',
];
const COLUMNS = COLUMN_NAMES.join(', ');
const UPDATED_COLUMNS = COLUMN_NAMES.map((column) => `c.${column}`).join(', ');

// The insert's column list and the matching typed parameters $3..$18 (after workspace_id $1 and campaign_id $2).
const INSERT_COLUMNS = `workspace_id, campaign_id, type, discount, currency, active, start_date, expiration_date,
  redemption_limit, per_customer_limit, priority, exclusive, max_discount, customer_id, gift_amount, gift_balance,
  validation_rule_ids, metadata, schedule`;
const INSERT_VALUES = `$1::uuid, $2::uuid, $3::text, $4::jsonb, $5::text, $6::boolean, $7::timestamptz, $8::timestamptz,
  $9::int, $10::int, $11::int, $12::boolean, $13::bigint, $14::uuid, $15::bigint, $15::bigint, $16::uuid[], $17::jsonb,
  $18::jsonb`;

interface VoucherRow {
  [column: string]: unknown;
  id: string;
  workspace_id: string;
  code: string;
  campaign_id: string | null;
  type: VoucherType;
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
  gift_amount: number | null;
  gift_balance: number | null;
  validation_rule_ids: string[];
  schedule: Schedule | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

function toVoucher(row: VoucherRow): Voucher {
  return {
    id: row.id,
    code: row.code,
    campaignId: row.campaign_id,
    type: row.type,
    discount: row.discount,
    ...(row.type === 'GIFT_CARD'
      ? { gift: { amount: row.gift_amount ?? 0, balance: row.gift_balance ?? 0, currency: row.currency ?? '' } }
      : {}),
    currency: row.currency,
    active: row.active,
    startDate: row.start_date?.toISOString() ?? null,
    expirationDate: row.expiration_date?.toISOString() ?? null,
    redemption: { limit: row.redemption_limit, redeemedCount: row.redeemed_count },
    perCustomerLimit: row.per_customer_limit,
    priority: row.priority,
    exclusive: row.exclusive,
    maxDiscount: row.max_discount,
    customerId: row.customer_id,
    validationRuleIds: row.validation_rule_ids,
    schedule: row.schedule,
    metadata: row.metadata,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function fieldValues(workspaceId: string, campaignId: string | null, f: VoucherFields): unknown[] {
  return [
    workspaceId, campaignId, f.type, f.discount, f.currency, f.active, f.startDate, f.expirationDate, f.redemptionLimit,
    f.perCustomerLimit, f.priority, f.exclusive, f.maxDiscount, f.customerId, f.giftAmount, f.validationRuleIds, f.metadata,
    f.schedule,
  ];
}

/** Undefined when the code is taken: the conflict is answered without aborting the caller's transaction. */
export async function insertVoucher(
  db: Sql,
  workspaceId: string,
  campaignId: string | null,
  code: string,
  fields: VoucherFields,
): Promise<Voucher | undefined> {
  const { rows } = await db.query<VoucherRow>(
    `INSERT INTO vouchers (${INSERT_COLUMNS}, code) VALUES (${INSERT_VALUES}, $19)
     ON CONFLICT ON CONSTRAINT vouchers_code_unique DO NOTHING RETURNING ${COLUMNS}`,
    [...fieldValues(workspaceId, campaignId, fields), code],
  );
  return rows[0] && toVoucher(rows[0]);
}

const CODE_GENERATION_LOCK = 7241;

/**
 * Two bulk inserts that meet on a code wait for each other, and with many codes each can end up waiting on the
 * other (a deadlock). Bulk generations of one workspace therefore take turns; single creations hold one code and
 * cannot close such a cycle.
 */
export async function lockCodeGeneration(tx: Sql, workspaceId: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CODE_GENERATION_LOCK, workspaceId]);
}

/** Candidate codes with the ids their vouchers get (time-ordered: appended to the id indexes, not scattered). */
export interface CodeCandidates {
  codes: string[];
  ids: string[];
}

/**
 * Inserts a voucher for each of the first `limit` candidate codes still free; taken codes are skipped. Gift cards get
 * their CREDITS_ADDED entry in the same statement. With no more candidates than `limit` (the first round of a
 * generation), ON CONFLICT alone skips the taken codes: the NOT EXISTS probe that keeps the LIMIT from counting them
 * would cost one more index lookup per row.
 */
export async function insertGeneratedVouchers(
  db: Sql,
  workspaceId: string,
  campaignId: string,
  fields: VoucherFields,
  candidates: CodeCandidates,
  limit: number,
): Promise<string[]> {
  const cut = candidates.codes.length > limit;
  const credits = fields.giftAmount !== null;
  const inserted = `INSERT INTO vouchers (id, ${INSERT_COLUMNS}, code)
       SELECT candidate.id, ${INSERT_VALUES}, candidate.code FROM unnest($19::text[], $20::uuid[]) AS candidate (code, id)
       ${cut ? 'WHERE NOT EXISTS (SELECT 1 FROM vouchers taken WHERE taken.workspace_id = $1 AND taken.code = candidate.code) LIMIT $21' : ''}
       ON CONFLICT (workspace_id, code) DO NOTHING
       RETURNING id, code, gift_balance`;
  const text = credits
    ? `WITH inserted AS (${inserted}), credits AS (
         INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after)
         SELECT $1, id, 'CREDITS_ADDED', gift_balance, gift_balance FROM inserted
       )
       SELECT code FROM inserted`
    : inserted;
  const values = [...fieldValues(workspaceId, campaignId, fields), candidates.codes, candidates.ids, ...(cut ? [limit] : [])];
  const { rows } = await db.query<{ code: string }>(text, values);
  return rows.map((row) => row.code);
}

/**
 * Whether the planner's statistics know fewer vouchers than a bulk insert just added: then lookups by code may be
 * planned as scans until the next ANALYZE. Otherwise the planner scales what it knows to the table's current size.
 */
export async function voucherStatisticsAreBehind(db: Sql, added: number): Promise<boolean> {
  const { rows } = await db.query<{ known: number }>(`SELECT reltuples::float8 AS known FROM pg_class WHERE oid = 'vouchers'::regclass`);
  return (rows[0]?.known ?? -1) < added;
}

export async function insertGiftCredits(db: Sql, workspaceId: string, voucherId: string, amount: number, balanceAfter: number): Promise<void> {
  await db.query(
    `INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after) VALUES ($1, $2, 'CREDITS_ADDED', $3, $4)`,
    [workspaceId, voucherId, amount, balanceAfter],
  );
}

export async function findVoucherByCode(db: Sql, workspaceId: string, code: string): Promise<Voucher | undefined> {
  const { rows } = await db.query<VoucherRow>(`SELECT ${COLUMNS} FROM vouchers WHERE workspace_id = $1 AND code = $2 AND kind = 'CODE'`, [workspaceId, code]);
  return rows[0] && toVoucher(rows[0]);
}

/**
 * The voucher as it is before a change, locked until the caller's transaction ends (its audit entry's `before`). NO KEY
 * UPDATE lets redemptions referencing the voucher insert meanwhile; their counter update waits for the commit.
 */
export async function lockVoucherByCode(tx: Sql, workspaceId: string, code: string): Promise<Voucher | undefined> {
  const { rows } = await tx.query<VoucherRow>(
    `SELECT ${COLUMNS} FROM vouchers WHERE workspace_id = $1 AND code = $2 AND kind = 'CODE' FOR NO KEY UPDATE`,
    [workspaceId, code],
  );
  return rows[0] && toVoucher(rows[0]);
}

/**
 * Applies the fields present in the patch ($3 names them), guarded in SQL: dates in order, the limit not below the
 * uses already made, a discount only on DISCOUNT vouchers. Undefined when the voucher is missing or a guard failed.
 */
export async function patchVoucher(db: Sql, workspaceId: string, code: string, patch: UpdateVoucherBody): Promise<Voucher | undefined> {
  const present = presentFields(patch);
  const { rows } = await db.query<VoucherRow>(
    `WITH next AS (
       SELECT id,
         CASE WHEN 'active' = ANY($3) THEN $4::boolean ELSE active END AS active,
         CASE WHEN 'startDate' = ANY($3) THEN $5::timestamptz ELSE start_date END AS start_date,
         CASE WHEN 'expirationDate' = ANY($3) THEN $6::timestamptz ELSE expiration_date END AS expiration_date,
         CASE WHEN 'redemptionLimit' = ANY($3) THEN $7::int ELSE redemption_limit END AS redemption_limit,
         CASE WHEN 'perCustomerLimit' = ANY($3) THEN $8::int ELSE per_customer_limit END AS per_customer_limit,
         CASE WHEN 'priority' = ANY($3) THEN $9::int ELSE priority END AS priority,
         CASE WHEN 'exclusive' = ANY($3) THEN $10::boolean ELSE exclusive END AS exclusive,
         CASE WHEN 'maxDiscount' = ANY($3) THEN $11::bigint ELSE max_discount END AS max_discount,
         CASE WHEN 'customerId' = ANY($3) THEN $12::uuid ELSE customer_id END AS customer_id,
         CASE WHEN 'discount' = ANY($3) THEN $13::jsonb ELSE discount END AS discount,
         CASE WHEN 'validationRuleIds' = ANY($3) THEN $14::uuid[] ELSE validation_rule_ids END AS validation_rule_ids,
         CASE WHEN 'metadata' = ANY($3) THEN $15::jsonb ELSE metadata END AS metadata,
         CASE WHEN 'schedule' = ANY($3) THEN $16::jsonb ELSE schedule END AS schedule,
         CASE WHEN 'currency' = ANY($3) THEN $17::text ELSE currency END AS currency
       FROM vouchers WHERE workspace_id = $1 AND code = $2 AND kind = 'CODE' FOR UPDATE
     )
     UPDATE vouchers c SET active = n.active, start_date = n.start_date, expiration_date = n.expiration_date,
       redemption_limit = n.redemption_limit, per_customer_limit = n.per_customer_limit, priority = n.priority,
       exclusive = n.exclusive, max_discount = n.max_discount, customer_id = n.customer_id, discount = n.discount,
       validation_rule_ids = n.validation_rule_ids, metadata = n.metadata, schedule = n.schedule, currency = n.currency,
       updated_at = now()
     FROM next n
     WHERE c.id = n.id
       AND (n.start_date IS NULL OR n.expiration_date IS NULL OR n.start_date <= n.expiration_date)
       AND (n.redemption_limit IS NULL OR c.redeemed_count <= n.redemption_limit)
       AND (n.discount IS NULL OR c.type = 'DISCOUNT')
       AND (c.currency IS NULL OR c.currency = n.currency)
     RETURNING ${UPDATED_COLUMNS}`,
    [
      workspaceId, code, present, patch.active ?? null, patch.startDate ?? null, patch.expirationDate ?? null,
      patch.redemptionLimit ?? null, patch.perCustomerLimit ?? null, patch.priority ?? null, patch.exclusive ?? null,
      patch.maxDiscount ?? null, patch.customerId ?? null, patch.discount ?? null, patch.validationRuleIds ?? null,
      patch.metadata ?? null, patch.schedule ?? null, patch.currency ?? null,
    ],
  );
  return rows[0] && toVoucher(rows[0]);
}

export async function updateVoucherActive(db: Sql, workspaceId: string, code: string, active: boolean): Promise<Voucher | undefined> {
  const { rows } = await db.query<VoucherRow>(
    `UPDATE vouchers SET active = $3, updated_at = now() WHERE workspace_id = $1 AND code = $2 AND kind = 'CODE' RETURNING ${COLUMNS}`,
    [workspaceId, code, active],
  );
  return rows[0] && toVoucher(rows[0]);
}

/** The deleted voucher as it was, or undefined when there was none. */
export async function deleteVoucherByCode(db: Sql, workspaceId: string, code: string): Promise<Voucher | undefined> {
  const { rows } = await db.query<VoucherRow>(
    `DELETE FROM vouchers WHERE workspace_id = $1 AND code = $2 AND kind = 'CODE' RETURNING ${COLUMNS}`,
    [workspaceId, code],
  );
  return rows[0] && toVoucher(rows[0]);
}

export function listVouchers(db: Sql, cursors: CursorCodec, workspaceId: string, page: PageRequest & { campaignId?: string | undefined }) {
  const where = ['workspace_id = $1', "kind = 'CODE'"];
  const params: unknown[] = [workspaceId];
  if (page.campaignId) {
    where.push('campaign_id = $2');
    params.push(page.campaignId);
  }
  // A cursor is bound to its filter: one issued for a campaign's list is refused by another list.
  const list = page.campaignId ? `vouchers.list:${page.campaignId}` : 'vouchers.list';
  return keysetPage<VoucherRow, Voucher>(db, cursors, { list, from: 'vouchers', columns: COLUMNS, where, params, map: toVoucher }, page);
}

/** Planner statistics of the vouchers table, after a bulk insert. */
export async function refreshVoucherStatistics(db: Sql): Promise<void> {
  await db.query('ANALYZE vouchers');
}
