// Order use cases: create (customer resolved or created, order.created) and update (status moves checked under the
// row lock, order.paid / order.canceled / order.fulfilled), each event in the transaction of its change.
import { problem } from '../../contract/problems.js';
import { sqlState, UNIQUE_VIOLATION, withTransaction, type Pool } from '../../platform/database.js';
import { requireCustomer } from '../customers/index.js';
import { recordEvent, type EventType } from '../events/index.js';
import { insertOrder, lockOrder, updateOrder } from './order.queries.js';
import { ORDER_STATUS_MOVES, type CreateOrderBody, type OrderStatus, type StoredOrder, type UpdateOrderBody } from './order.schemas.js';

const FOREIGN_KEY_VIOLATION = '23503';

const STATUS_EVENTS: Readonly<Partial<Record<OrderStatus, EventType>>> = Object.freeze({
  PAID: 'order.paid',
  CANCELED: 'order.canceled',
  FULFILLED: 'order.fulfilled',
});

const orderNotFound = () => problem('not_found', 'no such order');

function isSourceIdConflict(error: unknown): boolean {
  return sqlState(error) === UNIQUE_VIOLATION && (error as { constraint?: unknown }).constraint === 'orders_source_id_unique';
}

export async function createOrder(db: Pool, workspaceId: string, input: CreateOrderBody): Promise<StoredOrder> {
  try {
    return await withTransaction(db, async (tx) => {
      const customerId = input.customer ? await requireCustomer(tx, workspaceId, input.customer) : null;
      const order = await insertOrder(tx, workspaceId, {
        sourceId: input.sourceId ?? null,
        status: input.status,
        amount: input.amount,
        currency: input.currency,
        items: input.items ?? [],
        customerId,
        metadata: input.metadata ?? {},
      });
      await recordEvent(tx, workspaceId, 'order.created', {
        orderId: order.id,
        ...(order.sourceId !== null ? { sourceId: order.sourceId } : {}),
        ...(order.customerId !== null ? { customerId: order.customerId } : {}),
        amount: order.amount,
        currency: order.currency,
        status: order.status,
      });
      return order;
    });
  } catch (error) {
    if (isSourceIdConflict(error)) throw problem('conflict', `an order with sourceId ${JSON.stringify(input.sourceId)} exists in this workspace`);
    // The customer was deleted between its lookup and the insert.
    if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw problem('not_found', 'no such customer');
    throw error;
  }
}

/** Applies the patch; a status move outside ORDER_STATUS_MOVES is 409, the current status again moves nothing. */
export async function changeOrder(db: Pool, workspaceId: string, id: string, patch: UpdateOrderBody): Promise<StoredOrder> {
  return withTransaction(db, async (tx) => {
    const current = await lockOrder(tx, workspaceId, id);
    if (!current) throw orderNotFound();
    const { status, ...rest } = patch;
    const moves = status !== undefined && status !== current.status;
    if (moves && !ORDER_STATUS_MOVES[current.status].includes(status)) {
      throw problem('conflict', `an order cannot move from ${current.status} to ${status}`);
    }
    const change = moves ? { ...rest, status } : rest;
    if (Object.values(change).every((value) => value === undefined)) return current;
    const order = await updateOrder(tx, workspaceId, id, change);
    if (!order) throw orderNotFound();
    const type = moves ? STATUS_EVENTS[order.status] : undefined;
    if (type) {
      await recordEvent(tx, workspaceId, type, {
        orderId: order.id,
        ...(order.sourceId !== null ? { sourceId: order.sourceId } : {}),
        status: order.status,
      });
    }
    return order;
  });
}
