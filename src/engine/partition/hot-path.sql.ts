// The engine's SQL: loading hot state, and the guarded writes of a group commit. Every write carries its guard, so a
// stale cache or a second process can never over-redeem: a guard that does not hold returns fewer rows, never an error.
import { preparedQuery, type Sql } from '../../platform/database.js';
import type { CampaignSnapshot, VoucherSnapshot } from '../../domains/redemptions/redemption.rules.js';
import type { Discount } from '../../domains/vouchers/index.js';

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
  };
}

export interface VoucherKey {
  workspaceId: string;
  code: string;
}

/** The vouchers named (with their campaigns), in one query. Missing ones are absent from the result. */
export async function loadSnapshots(db: Sql, keys: readonly VoucherKey[]): Promise<VoucherSnapshot[]> {
  if (keys.length === 0) return [];
  const { rows } = await preparedQuery<SnapshotRow>(db, 'engine.loadSnapshots.1',
    `SELECT v.id, v.workspace_id, v.code, v.type, v.campaign_id, v.discount, v.currency, v.active, v.start_date,
            v.expiration_date, v.redemption_limit, v.redeemed_count, v.per_customer_limit, v.priority, v.exclusive,
            v.max_discount, v.customer_id, v.gift_balance, v.validation_rule_ids, v.config_version,
            c.active AS c_active, c.start_date AS c_start_date, c.expiration_date AS c_expiration_date,
            c.currency AS c_currency, c.priority AS c_priority, c.exclusive AS c_exclusive, c.version AS c_version,
            c.validation_rule_ids AS c_validation_rule_ids
       FROM unnest($1::uuid[], $2::text[]) AS k(workspace_id, code)
       JOIN vouchers v ON v.workspace_id = k.workspace_id AND v.code = k.code
       LEFT JOIN campaigns c ON c.id = v.campaign_id`,
    [keys.map((k) => k.workspaceId), keys.map((k) => k.code)],
  );
  return rows.map(toSnapshot);
}

export interface UsageKey {
  voucherId: string;
  customerId: string;
}

export async function loadCustomerUses(db: Sql, keys: readonly UsageKey[]): Promise<Array<UsageKey & { uses: number }>> {
  if (keys.length === 0) return [];
  const { rows } = await preparedQuery<{ voucher_id: string; customer_id: string; uses: number }>(db, 'engine.loadCustomerUses.2',
    `SELECT u.voucher_id, u.customer_id, u.uses
       FROM unnest($1::uuid[], $2::uuid[]) AS k(voucher_id, customer_id)
       JOIN voucher_customer_uses u ON u.voucher_id = k.voucher_id AND u.customer_id = k.customer_id`,
    [keys.map((k) => k.voucherId), keys.map((k) => k.customerId)],
  );
  return rows.map((r) => ({ voucherId: r.voucher_id, customerId: r.customer_id, uses: r.uses }));
}

export interface StoredKey {
  workspaceId: string;
  key: string;
  requestHash: string;
  response: Record<string, unknown>;
}

export async function loadIdempotencyKeys(db: Sql, keys: ReadonlyArray<{ workspaceId: string; key: string }>): Promise<StoredKey[]> {
  if (keys.length === 0) return [];
  const { rows } = await preparedQuery<{ workspace_id: string; key: string; request_hash: string; response: Record<string, unknown> }>(db, 'engine.loadIdempotencyKeys.3',
    `SELECT i.workspace_id, i.key, i.request_hash, i.response
       FROM unnest($1::uuid[], $2::text[]) AS k(workspace_id, key)
       JOIN idempotency_keys i ON i.workspace_id = k.workspace_id AND i.key = k.key`,
    [keys.map((k) => k.workspaceId), keys.map((k) => k.key)],
  );
  return rows.map((r) => ({ workspaceId: r.workspace_id, key: r.key, requestHash: r.request_hash, response: r.response }));
}

/** Inserts the keys that are free; returns the `workspaceId key` of those inserted (a taken key is someone else's request). */
export async function insertIdempotencyKeys(tx: Sql, keys: readonly StoredKey[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const sorted = [...keys].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const { rows } = await preparedQuery<{ workspace_id: string; key: string }>(tx, 'engine.insertIdempotencyKeys.4',
    `INSERT INTO idempotency_keys (workspace_id, key, request_hash, response)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[])
     ON CONFLICT (workspace_id, key) DO NOTHING
     RETURNING workspace_id, key`,
    [sorted.map((k) => k.workspaceId), sorted.map((k) => k.key), sorted.map((k) => k.requestHash), sorted.map((k) => JSON.stringify(k.response))],
  );
  return new Set(rows.map((r) => `${r.workspace_id} ${r.key}`));
}

export interface VoucherDelta {
  id: string;
  uses: number;
  balance: number;
  configVersion: number;
  campaignVersion: number | null;
}

export interface VoucherAfter {
  id: string;
  redeemedCount: number;
  giftBalance: number | null;
}

/**
 * Applies use and balance deltas under their guards: the settings the decision saw (config and campaign versions), the
 * redemption limit and a balance that stays >= 0. Rows are locked in id order, so engine transactions never deadlock.
 * Returns the rows that passed, with their new counters.
 */
export async function applyVoucherDeltas(tx: Sql, deltas: readonly VoucherDelta[]): Promise<VoucherAfter[]> {
  if (deltas.length === 0) return [];
  const { rows } = await preparedQuery<{ id: string; redeemed_count: number; gift_balance: number | null }>(tx, 'engine.applyVoucherDeltas.5',
    `WITH d AS (
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::bigint[], $4::int[], $5::int[]) AS d(id, uses, balance, cv, campv)
     ), locked AS (
       SELECT v.id FROM vouchers v WHERE v.id IN (SELECT id FROM d) ORDER BY v.id FOR UPDATE
     )
     UPDATE vouchers v
        SET redeemed_count = v.redeemed_count + d.uses,
            gift_balance = CASE WHEN d.balance = 0 THEN v.gift_balance ELSE v.gift_balance + d.balance END
       FROM d JOIN locked ON locked.id = d.id
      WHERE v.id = d.id
        AND v.config_version = d.cv
        AND (v.redemption_limit IS NULL OR v.redeemed_count + d.uses <= v.redemption_limit)
        AND (d.balance = 0 OR v.gift_balance + d.balance >= 0)
        AND (v.campaign_id IS NULL OR d.campv = (SELECT c.version FROM campaigns c WHERE c.id = v.campaign_id))
     RETURNING v.id, v.redeemed_count, v.gift_balance`,
    [
      deltas.map((d) => d.id),
      deltas.map((d) => d.uses),
      deltas.map((d) => d.balance),
      deltas.map((d) => d.configVersion),
      deltas.map((d) => d.campaignVersion ?? -1),
    ],
  );
  return rows.map((r) => ({ id: r.id, redeemedCount: r.redeemed_count, giftBalance: r.gift_balance }));
}

export interface UsageDelta extends UsageKey {
  workspaceId: string;
  delta: number;
}

/** Adds to per-customer use counts (rollbacks subtract); returns the new counts (the caller compares them with perCustomerLimit). */
export async function applyUsageDeltas(tx: Sql, deltas: readonly UsageDelta[]): Promise<Array<UsageKey & { uses: number }>> {
  const sorted = [...deltas].filter((d) => d.delta !== 0).sort((a, b) => (a.voucherId + a.customerId < b.voucherId + b.customerId ? -1 : 1));
  const up = sorted.filter((d) => d.delta > 0);
  const down = sorted.filter((d) => d.delta < 0);
  const result: Array<UsageKey & { uses: number }> = [];
  const collect = (rows: Array<{ voucher_id: string; customer_id: string; uses: number }>) =>
    result.push(...rows.map((r) => ({ voucherId: r.voucher_id, customerId: r.customer_id, uses: r.uses })));
  if (up.length) {
    const { rows } = await preparedQuery<{ voucher_id: string; customer_id: string; uses: number }>(tx, 'engine.applyUsageDeltas.6',
      `INSERT INTO voucher_customer_uses AS u (workspace_id, voucher_id, customer_id, uses)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int[])
       ON CONFLICT (voucher_id, customer_id) DO UPDATE SET uses = u.uses + EXCLUDED.uses
       RETURNING u.voucher_id, u.customer_id, u.uses`,
      [up.map((d) => d.workspaceId), up.map((d) => d.voucherId), up.map((d) => d.customerId), up.map((d) => d.delta)],
    );
    collect(rows);
  }
  if (down.length) {
    const { rows } = await preparedQuery<{ voucher_id: string; customer_id: string; uses: number }>(tx, 'engine.applyUsageDeltas.7',
      `UPDATE voucher_customer_uses u SET uses = greatest(0, u.uses + d.delta)
         FROM unnest($1::uuid[], $2::uuid[], $3::int[]) AS d(voucher_id, customer_id, delta)
        WHERE u.voucher_id = d.voucher_id AND u.customer_id = d.customer_id
       RETURNING u.voucher_id, u.customer_id, u.uses`,
      [down.map((d) => d.voucherId), down.map((d) => d.customerId), down.map((d) => d.delta)],
    );
    collect(rows);
  }
  return result;
}

export interface RedemptionRow {
  workspaceId: string;
  id: string;
  voucherId: string;
  voucherCode: string;
  campaignId: string | null;
  amount: number;
  kind: 'DISCOUNT' | 'GIFT';
  customerId: string | null;
  orderId: string | null;
  orderAmount: number | null;
  currency: string | null;
  stackId: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

export async function insertRedemptions(tx: Sql, rows: readonly RedemptionRow[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <K extends keyof RedemptionRow>(k: K) => rows.map((r) => r[k]);
  await preparedQuery(tx, 'engine.insertRedemptions.8',
    `INSERT INTO redemptions (workspace_id, id, voucher_id, voucher_code, campaign_id, amount, kind, customer_id, order_id,
                              order_amount, currency, stack_id, status, metadata, created_at)
     SELECT w, i, v, c, camp, a, k, cu, o, oa, cur, s, 'SUCCEEDED', m, t
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::bigint[], $7::text[], $8::uuid[],
                   $9::text[], $10::bigint[], $11::text[], $12::uuid[], $13::jsonb[], $14::timestamptz[])
            AS r(w, i, v, c, camp, a, k, cu, o, oa, cur, s, m, t)`,
    [
      col('workspaceId'), col('id'), col('voucherId'), col('voucherCode'), col('campaignId'), col('amount'), col('kind'),
      col('customerId'), col('orderId'), col('orderAmount'), col('currency'), col('stackId'),
      rows.map((r) => JSON.stringify(r.metadata)), col('createdAt'),
    ],
  );
}

export interface StoredRedemption {
  id: string;
  workspaceId: string;
  voucherId: string;
  voucherCode: string;
  amount: number;
  kind: 'DISCOUNT' | 'GIFT';
  customerId: string | null;
  status: 'SUCCEEDED' | 'ROLLED_BACK';
}

export async function loadRedemptions(db: Sql, ids: readonly string[]): Promise<StoredRedemption[]> {
  if (ids.length === 0) return [];
  const { rows } = await preparedQuery<{ [k: string]: unknown; id: string; workspace_id: string; voucher_id: string; voucher_code: string; amount: number; kind: 'DISCOUNT' | 'GIFT'; customer_id: string | null; status: 'SUCCEEDED' | 'ROLLED_BACK' }>(db, 'engine.loadRedemptions.9',
    `SELECT id, workspace_id, voucher_id, voucher_code, amount, kind, customer_id, status FROM redemptions WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    voucherId: r.voucher_id,
    voucherCode: r.voucher_code,
    amount: r.amount,
    kind: r.kind,
    customerId: r.customer_id,
    status: r.status,
  }));
}

/** Marks redemptions rolled back, guarded on their status; returns the ids that were still SUCCEEDED. */
export async function markRolledBack(tx: Sql, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await preparedQuery<{ id: string }>(tx, 'engine.markRolledBack.10',
    `UPDATE redemptions SET status = 'ROLLED_BACK' WHERE id = ANY($1::uuid[]) AND status = 'SUCCEEDED' RETURNING id`,
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

export interface RollbackRow {
  workspaceId: string;
  id: string;
  redemptionId: string;
  voucherCode: string;
  amount: number;
  reason: string | null;
  createdAt: Date;
}

export async function insertRollbacks(tx: Sql, rows: readonly RollbackRow[]): Promise<void> {
  if (rows.length === 0) return;
  await preparedQuery(tx, 'engine.insertRollbacks.11',
    `INSERT INTO redemption_rollbacks (workspace_id, id, redemption_id, voucher_code, amount, reason, created_at)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::bigint[], $6::text[], $7::timestamptz[])`,
    [
      rows.map((r) => r.workspaceId), rows.map((r) => r.id), rows.map((r) => r.redemptionId), rows.map((r) => r.voucherCode),
      rows.map((r) => r.amount), rows.map((r) => r.reason), rows.map((r) => r.createdAt),
    ],
  );
}

export interface LedgerRow {
  workspaceId: string;
  id: string;
  voucherId: string;
  type: 'CREDITS_ADDED' | 'REDEMPTION' | 'ROLLBACK' | 'ADJUSTMENT';
  amount: number;
  balanceAfter: number;
  redemptionId: string | null;
  createdAt: Date;
}

export async function insertLedgerEntries(tx: Sql, rows: readonly LedgerRow[]): Promise<void> {
  if (rows.length === 0) return;
  await preparedQuery(tx, 'engine.insertLedgerEntries.12',
    `INSERT INTO gift_ledger_entries (workspace_id, id, voucher_id, type, amount, balance_after, redemption_id, created_at)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::bigint[], $6::bigint[], $7::uuid[], $8::timestamptz[])`,
    [
      rows.map((r) => r.workspaceId), rows.map((r) => r.id), rows.map((r) => r.voucherId), rows.map((r) => r.type),
      rows.map((r) => r.amount), rows.map((r) => r.balanceAfter), rows.map((r) => r.redemptionId), rows.map((r) => r.createdAt),
    ],
  );
}

/**
 * Fills balanceAfter of a voucher's ledger rows (in order) from its balance after the whole transaction: the row is
 * locked by the update, so the last entry ends at that balance and each earlier one before the next one's change.
 */
export function settleBalances(entries: LedgerRow[], finalBalance: number): void {
  let after = finalBalance;
  for (let i = entries.length - 1; i >= 0; i--) {
    entries[i]!.balanceAfter = after;
    after -= entries[i]!.amount;
  }
}
