// SQL of order returns: the order and its redemptions as a return reads them, the gift credits and points it gives
// back (the card's row locked, the entry's balance_after read from the row it updated), and the return rows.
import type { Sql } from '../platform/database.js';
import type { ReturnLine, ReturnRedemption } from './order-return.rules.js';
import type { OrderReturn } from './order-return.schemas.js';

export interface OrderForReturn {
  id: string;
  sourceId: string | null;
  status: string;
  amount: number;
  lines: ReturnLine[];
  returnedAmount: number;
  returnedUnits: number[];
}

/** The order, its row locked until the transaction ends: returns (and status moves) of one order take turns. */
export async function lockOrderForReturn(tx: Sql, workspaceId: string, id: string): Promise<OrderForReturn | undefined> {
  const { rows } = await tx.query<{ id: string; source_id: string | null; status: string; amount: number; items: ReturnLine[]; returned_amount: number; returned_units: number[] }>(
    `SELECT id, source_id, status, amount, items, returned_amount, returned_units FROM orders
      WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE`,
    [workspaceId, id],
  );
  const r = rows[0];
  if (!r) return undefined;
  return { id: r.id, sourceId: r.source_id, status: r.status, amount: r.amount, lines: r.items, returnedAmount: r.returned_amount, returnedUnits: r.returned_units };
}

export interface StandingRedemption extends ReturnRedemption {
  voucherId: string;
  voucherCode: string;
  campaignId: string | null;
  pointsEntryId: string | null;
}

/**
 * The redemptions of the order (its id or sourceId) that still stand, in id order; `lock`: locked until the
 * transaction ends (a rollback racing the return then waits, and its guard sees what the return gave back).
 */
export async function findStandingRedemptions(tx: Sql, workspaceId: string, order: OrderForReturn, lock: boolean): Promise<StandingRedemption[]> {
  const keys = order.sourceId !== null ? [order.id, order.sourceId] : [order.id];
  const { rows } = await tx.query<{
    id: string; kind: ReturnRedemption['kind']; amount: number; points: number | null; item_discounts: number[] | null; returned_amount: number;
    returned_credit: number; voucher_id: string; voucher_code: string; campaign_id: string | null; points_entry_id: string | null;
  }>(
    `SELECT id, kind, amount, points, item_discounts, returned_amount, returned_credit, voucher_id, voucher_code, campaign_id, points_entry_id
       FROM redemptions WHERE workspace_id = $1 AND order_id = ANY($2::text[]) AND status = 'SUCCEEDED'
      ORDER BY id ${lock ? 'FOR UPDATE' : ''}`,
    [workspaceId, keys],
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    amount: r.amount,
    points: r.points,
    itemDiscounts: r.item_discounts,
    returnedAmount: r.returned_amount,
    returnedCredit: r.returned_credit,
    voucherId: r.voucher_id,
    voucherCode: r.voucher_code,
    campaignId: r.campaign_id,
    pointsEntryId: r.points_entry_id,
  }));
}

/** Locks the gift cards a return credits, in id order (the order the engine's statements lock vouchers in). */
export async function lockVouchers(tx: Sql, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query('SELECT id FROM vouchers WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [[...new Set(ids)].sort()]);
}

/** Gift credits back onto a card (its row locked), with their RETURN entry; undefined when the card is gone. */
export async function creditGiftCard(tx: Sql, workspaceId: string, voucherId: string, redemptionId: string, amount: number) {
  const { rows } = await tx.query<{ code: string; balance: number; entry_id: string }>(
    `WITH card AS (
       UPDATE vouchers SET gift_balance = gift_balance + $3 WHERE workspace_id = $1 AND id = $2 AND type = 'GIFT_CARD'
       RETURNING id, code, gift_balance
     ), entry AS (
       INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after, redemption_id)
       SELECT $1, id, 'RETURN', $3, gift_balance, $4 FROM card RETURNING id
     )
     SELECT card.code, card.gift_balance AS balance, entry.id AS entry_id FROM card, entry`,
    [workspaceId, voucherId, amount, redemptionId],
  );
  return rows[0];
}

/** Points back onto the card that paid with them, into the buckets the debit drew from (a RETURN entry); the member is the debit's. */
export async function refundPaidPoints(tx: Sql, workspaceId: string, debitEntryId: string, points: number, returnId: string) {
  const { rows } = await tx.query<{ entry_id: string; balance_after: number; points: number; member_id: string }>(
    `SELECT x.entry_id, x.balance_after, x.points, e.member_id
       FROM loyalty_refund($1, $2, 'RETURN', 'return', $4, $3) AS x JOIN loyalty_ledger_entries e ON e.id = $2`,
    [workspaceId, debitEntryId, points, returnId],
  );
  return rows[0];
}

/** Adds what a return gave back to each redemption. */
export async function addRedemptionReturns(tx: Sql, rows: ReadonlyArray<{ id: string; discount: number; credit: number }>): Promise<void> {
  const changed = rows.filter((r) => r.discount > 0 || r.credit > 0);
  if (changed.length === 0) return;
  await tx.query(
    `UPDATE redemptions r SET returned_amount = r.returned_amount + x.discount, returned_credit = r.returned_credit + x.credit
       FROM unnest($1::uuid[], $2::bigint[], $3::bigint[]) AS x(id, discount, credit) WHERE r.id = x.id`,
    [changed.map((r) => r.id), changed.map((r) => r.discount), changed.map((r) => r.credit)],
  );
}

export async function insertReturn(tx: Sql, workspaceId: string, r: Omit<OrderReturn, 'reason'> & { reason: string | null }): Promise<void> {
  await tx.query(
    `INSERT INTO order_returns (workspace_id, id, order_id, amount, items, reversals, reason, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [workspaceId, r.id, r.orderId, r.amount, JSON.stringify(r.items), JSON.stringify(r.reversals), r.reason, r.createdAt],
  );
}

export async function setOrderReturned(tx: Sql, workspaceId: string, id: string, returned: { amount: number; units: number[]; status: string }): Promise<void> {
  await tx.query(
    `UPDATE orders SET returned_amount = $3, returned_units = $4, status = $5, updated_at = now() WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, id, returned.amount, JSON.stringify(returned.units), returned.status],
  );
}

export async function listReturns(db: Sql, workspaceId: string, orderId: string): Promise<Array<OrderReturn & { reason?: string }>> {
  const { rows } = await db.query<{ id: string; order_id: string; amount: number; items: OrderReturn['items']; reversals: OrderReturn['reversals']; reason: string | null; created_at: Date }>(
    `SELECT id, order_id, amount, items, reversals, reason, created_at FROM order_returns
      WHERE workspace_id = $1 AND order_id = $2 ORDER BY created_at, id`,
    [workspaceId, orderId],
  );
  return rows.map((r) => ({
    id: r.id,
    orderId: r.order_id,
    amount: r.amount,
    items: r.items,
    reversals: r.reversals,
    ...(r.reason !== null ? { reason: r.reason } : {}),
    createdAt: r.created_at.toISOString(),
  }));
}
