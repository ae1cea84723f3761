// SQL of orders, and the redemptions naming an order: parameterized, explicit columns, one mapper per row type.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage } from '../../platform/pagination.js';
import { presentFields } from '../../platform/partial-update.js';
import type { ListOrdersQuery, OrderRedemption, OrderStatus, StoredOrder, UpdateOrderBody } from './order.schemas.js';

const COLUMNS = 'id, source_id, status, amount, currency, items, customer_id, metadata, returned_amount, created_at, updated_at';

interface OrderRow {
  [column: string]: unknown;
  id: string;
  source_id: string | null;
  status: OrderStatus;
  amount: number;
  currency: string;
  items: StoredOrder['items'];
  customer_id: string | null;
  metadata: Record<string, unknown>;
  returned_amount: number;
  created_at: Date;
  updated_at: Date;
}

function toOrder(row: OrderRow): StoredOrder {
  return {
    id: row.id,
    sourceId: row.source_id,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    items: row.items,
    customerId: row.customer_id,
    metadata: row.metadata,
    returnedAmount: row.returned_amount,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface NewOrder {
  sourceId: string | null;
  status: OrderStatus;
  amount: number;
  currency: string;
  items: StoredOrder['items'];
  customerId: string | null;
  metadata: Record<string, unknown>;
}

/** Throws UNIQUE_VIOLATION (orders_source_id_unique) when the sourceId exists in the workspace. */
export async function insertOrder(db: Sql, workspaceId: string, order: NewOrder): Promise<StoredOrder> {
  const { rows } = await db.query<OrderRow>(
    `INSERT INTO orders (workspace_id, source_id, status, amount, currency, items, customer_id, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [
      workspaceId,
      order.sourceId,
      order.status,
      order.amount,
      order.currency,
      JSON.stringify(order.items),
      order.customerId,
      order.metadata,
    ],
  );
  return toOrder(rows[0]!);
}

export async function findOrder(db: Sql, workspaceId: string, id: string): Promise<StoredOrder | undefined> {
  const { rows } = await db.query<OrderRow>(`SELECT ${COLUMNS} FROM orders WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0] && toOrder(rows[0]);
}

/** The order, its row locked until the transaction ends: status moves of one order take turns. */
export async function lockOrder(tx: Sql, workspaceId: string, id: string): Promise<StoredOrder | undefined> {
  const { rows } = await tx.query<OrderRow>(
    `SELECT ${COLUMNS} FROM orders WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE`,
    [workspaceId, id],
  );
  return rows[0] && toOrder(rows[0]);
}

/** Sets the fields present in the patch ($3 names them); a field left out is kept. */
export async function updateOrder(db: Sql, workspaceId: string, id: string, patch: UpdateOrderBody): Promise<StoredOrder | undefined> {
  const { rows } = await db.query<OrderRow>(
    `UPDATE orders SET
       status = CASE WHEN 'status' = ANY($3) THEN $4::text ELSE status END,
       metadata = CASE WHEN 'metadata' = ANY($3) THEN $5::jsonb ELSE metadata END,
       amount = CASE WHEN 'amount' = ANY($3) THEN $6::bigint ELSE amount END,
       items = CASE WHEN 'items' = ANY($3) THEN $7::jsonb ELSE items END,
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [
      workspaceId,
      id,
      presentFields(patch),
      patch.status ?? null,
      patch.metadata ?? null,
      patch.amount ?? null,
      patch.items === undefined ? null : JSON.stringify(patch.items),
    ],
  );
  return rows[0] && toOrder(rows[0]);
}

export function listOrders(db: Sql, cursors: CursorCodec, workspaceId: string, request: ListOrdersQuery) {
  const where = ['workspace_id = $1'];
  const params: unknown[] = [workspaceId];
  const filter = (column: string, value: unknown) => {
    params.push(value);
    where.push(`${column} = $${params.length}`);
  };
  if (request.status !== undefined) filter('status', request.status);
  if (request.customerId !== undefined) filter('customer_id', request.customerId);
  if (request.sourceId !== undefined) filter('source_id', request.sourceId);
  return keysetPage<OrderRow, StoredOrder>(
    db,
    cursors,
    { list: 'orders.list', from: 'orders', columns: COLUMNS, where, params, map: toOrder },
    request,
  );
}

const ORDER_REDEMPTIONS_LIMIT = 100;

interface OrderRedemptionRow {
  [column: string]: unknown;
  id: string;
  voucher_code: string;
  amount: number;
  status: OrderRedemption['status'];
  created_at: Date;
}

/** Redemptions whose order_id is one of `orderIds` (the order's sourceId and its id), newest first. */
export async function listOrderRedemptions(db: Sql, workspaceId: string, orderIds: string[]): Promise<OrderRedemption[]> {
  const { rows } = await db.query<OrderRedemptionRow>(
    `SELECT id, voucher_code, amount, status, created_at FROM redemptions
     WHERE workspace_id = $1 AND order_id = ANY($2::text[])
     ORDER BY created_at DESC, id DESC LIMIT $3`,
    [workspaceId, orderIds, ORDER_REDEMPTIONS_LIMIT],
  );
  return rows.map((row) => ({
    id: row.id,
    voucherCode: row.voucher_code,
    amount: row.amount,
    status: row.status,
    createdAt: row.created_at.toISOString(),
  }));
}
