// SQL of the redemption read models and the gift ledger: parameterized, one row mapper each.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import { MAX_AMOUNT, type Redemption } from '../../contract/checkout.schemas.js';

const REDEMPTIONS = `(SELECT r.*, rb.created_at AS rolled_back_at
                        FROM redemptions r LEFT JOIN redemption_rollbacks rb ON rb.redemption_id = r.id) AS r`;
const COLUMNS = 'id, voucher_code, campaign_id, amount, points, kind, customer_id, order_id, order_amount, currency, stack_id, status, metadata, created_at, rolled_back_at';

interface RedemptionRow {
  [column: string]: unknown;
  id: string;
  voucher_code: string;
  campaign_id: string | null;
  amount: number;
  points: number | null;
  kind: Redemption['kind'];
  customer_id: string | null;
  order_id: string | null;
  order_amount: number | null;
  currency: string | null;
  stack_id: string | null;
  status: 'SUCCEEDED' | 'ROLLED_BACK';
  metadata: Record<string, unknown>;
  created_at: Date;
  rolled_back_at: Date | null;
}

function toRedemption(r: RedemptionRow): Redemption {
  return {
    id: r.id,
    voucherCode: r.voucher_code,
    amount: r.amount,
    ...(r.points !== null ? { points: r.points } : {}),
    kind: r.kind,
    status: r.status,
    ...(r.campaign_id ? { campaignId: r.campaign_id } : {}),
    ...(r.customer_id ? { customerId: r.customer_id } : {}),
    ...(r.order_id ? { orderId: r.order_id } : {}),
    ...(r.order_amount !== null ? { orderAmount: r.order_amount } : {}),
    ...(r.currency ? { currency: r.currency } : {}),
    ...(r.stack_id ? { stackId: r.stack_id } : {}),
    metadata: r.metadata,
    createdAt: r.created_at.toISOString(),
    ...(r.rolled_back_at ? { rolledBackAt: r.rolled_back_at.toISOString() } : {}),
  };
}

export async function findRedemption(db: Sql, workspaceId: string, id: string): Promise<Redemption | undefined> {
  const { rows } = await db.query<RedemptionRow>(`SELECT ${COLUMNS} FROM ${REDEMPTIONS} WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0] && toRedemption(rows[0]);
}

export interface RedemptionFilter extends PageRequest {
  voucherCode?: string | undefined;
  customerId?: string | undefined;
  orderId?: string | undefined;
  status?: 'SUCCEEDED' | 'ROLLED_BACK' | undefined;
}

export function listRedemptions(db: Sql, cursors: CursorCodec, workspaceId: string, request: RedemptionFilter) {
  const where = ['workspace_id = $1'];
  const params: unknown[] = [workspaceId];
  const filters: Array<[string, unknown]> = [
    ['voucher_code', request.voucherCode],
    ['customer_id', request.customerId],
    ['order_id', request.orderId],
    ['status', request.status],
  ];
  for (const [column, value] of filters) {
    if (value === undefined) continue;
    params.push(value);
    where.push(`${column} = $${params.length}`);
  }
  return keysetPage<RedemptionRow, Redemption>(db, cursors, { list: 'redemptions.list', from: REDEMPTIONS, columns: COLUMNS, where, params, map: toRedemption }, request);
}

interface LedgerRow {
  [column: string]: unknown;
  id: string;
  type: 'CREDITS_ADDED' | 'REDEMPTION' | 'ROLLBACK' | 'ADJUSTMENT';
  amount: number;
  balance_after: number;
  redemption_id: string | null;
  created_at: Date;
}

/** The voucher's id and type, to list its ledger (undefined when there is no such voucher). */
export async function findVoucherIdentity(db: Sql, workspaceId: string, code: string): Promise<{ id: string; type: string } | undefined> {
  const { rows } = await db.query<{ id: string; type: string }>("SELECT id, type FROM vouchers WHERE workspace_id = $1 AND code = $2 AND kind = 'CODE'", [workspaceId, code]);
  return rows[0];
}

export function listLedgerEntries(db: Sql, cursors: CursorCodec, workspaceId: string, voucherId: string, request: PageRequest) {
  return keysetPage<LedgerRow, ReturnType<typeof toLedgerEntry>>(
    db,
    cursors,
    {
      list: `vouchers.transactions:${voucherId}`,
      from: 'gift_ledger_entries',
      // Entries written before the bounds (schema 0016) may hold figures past 2^53-1: they read as the bound, never fail.
      columns: `id, type, greatest(least(amount, ${MAX_AMOUNT}), -${MAX_AMOUNT}) AS amount, least(balance_after, ${MAX_AMOUNT}) AS balance_after, redemption_id, created_at`,
      where: ['workspace_id = $1', 'voucher_id = $2'],
      params: [workspaceId, voucherId],
      map: toLedgerEntry,
    },
    request,
  );
}

function toLedgerEntry(r: LedgerRow) {
  return {
    id: r.id,
    type: r.type,
    amount: r.amount,
    balanceAfter: r.balance_after,
    ...(r.redemption_id ? { redemptionId: r.redemption_id } : {}),
    createdAt: r.created_at.toISOString(),
  };
}

export async function findStackLimit(db: Sql, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ stack_limit: number }>('SELECT stack_limit FROM workspaces WHERE workspace_id = $1', [workspaceId]);
  return rows[0]?.stack_limit ?? 5;
}

/** Deletes idempotency keys older than `olderThanMs`, at most `limit` per call; returns how many went. */
export async function pruneIdempotencyKeys(db: Sql, olderThanMs: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys WHERE ctid IN (
       SELECT ctid FROM idempotency_keys WHERE created_at < now() - $1::int8 * interval '1 millisecond' LIMIT $2)`,
    [olderThanMs, limit],
  );
  return rowCount ?? 0;
}
