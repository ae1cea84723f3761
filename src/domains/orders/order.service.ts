// Order use cases, each in its operation's unit of work: create (customer resolved or created, order.created, then the
// events of the moves its initial status stands for) and update (status moves checked under the row lock).
import type { UnitOfWork } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { sqlState, UNIQUE_VIOLATION } from '../../platform/database.js';
import { requireCustomer } from '../customers/index.js';
import type { EventType } from '../../contract/event.schemas.js';
import { insertOrder, lockOrder, updateOrder } from './order.queries.js';
import { ORDER_STATUS_MOVES, type CreateOrderBody, type OrderStatus, type StoredOrder, type UpdateOrderBody } from './order.schemas.js';

const FOREIGN_KEY_VIOLATION = '23503';

const STATUS_EVENTS: Readonly<Partial<Record<OrderStatus, EventType>>> = Object.freeze({
  PAID: 'order.paid',
  CANCELED: 'order.canceled',
  FULFILLED: 'order.fulfilled',
});

/**
 * The moves from CREATED that an order created in a later status stands for: it does what those moves do (an order
 * created FULFILLED was paid on the way), so loyalty earns and referrals confirm exactly as for an order moved there.
 */
const MOVES_FROM_CREATED: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = Object.freeze({
  CREATED: [],
  PAID: ['PAID'],
  CANCELED: ['CANCELED'],
  FULFILLED: ['PAID', 'FULFILLED'],
  PARTIALLY_RETURNED: [],
  RETURNED: [],
});

const RESOURCE = 'order';
const orderNotFound = () => problem('not_found', 'no such order');

function isSourceIdConflict(error: unknown): boolean {
  return sqlState(error) === UNIQUE_VIOLATION && (error as { constraint?: unknown }).constraint === 'orders_source_id_unique';
}

/** The event of each status the order moved into (the payload names the status the event reports). */
function emitStatusEvents(emit: UnitOfWork['emit'], order: StoredOrder, statuses: readonly OrderStatus[]): void {
  for (const status of statuses) {
    const type = STATUS_EVENTS[status];
    if (!type) continue;
    emit(type, { orderId: order.id, ...(order.sourceId !== null ? { sourceId: order.sourceId } : {}), status });
  }
}

export async function createOrder({ tx, record, emit }: UnitOfWork, workspaceId: string, input: CreateOrderBody): Promise<StoredOrder> {
  try {
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
    record({ resourceType: RESOURCE, resourceId: order.id, after: order });
    emit('order.created', {
      orderId: order.id,
      ...(order.sourceId !== null ? { sourceId: order.sourceId } : {}),
      ...(order.customerId !== null ? { customerId: order.customerId } : {}),
      amount: order.amount,
      currency: order.currency,
      status: order.status,
    });
    emitStatusEvents(emit, order, MOVES_FROM_CREATED[order.status]);
    return order;
  } catch (error) {
    // A failed statement has aborted the transaction: the unit of work rolls it back as the problem passes through.
    if (isSourceIdConflict(error)) throw problem('conflict', `an order with sourceId ${JSON.stringify(input.sourceId)} exists in this workspace`);
    // The customer was deleted between its lookup and the insert.
    if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw problem('not_found', 'no such customer');
    throw error;
  }
}

/**
 * Applies the patch; a status move outside ORDER_STATUS_MOVES is 409, the current status again moves nothing (its
 * entry then records no changes).
 */
export async function changeOrder({ tx, record, emit }: UnitOfWork, workspaceId: string, id: string, patch: UpdateOrderBody): Promise<StoredOrder> {
  const current = await lockOrder(tx, workspaceId, id);
  if (!current) throw orderNotFound();
  const { status, ...rest } = patch;
  const moves = status !== undefined && status !== current.status;
  if (moves && !ORDER_STATUS_MOVES[current.status].includes(status)) {
    throw problem('conflict', `an order cannot move from ${current.status} to ${status}`);
  }
  const change = moves ? { ...rest, status } : rest;
  if (Object.values(change).every((value) => value === undefined)) {
    record({ resourceType: RESOURCE, resourceId: id });
    return current;
  }
  const order = await updateOrder(tx, workspaceId, id, change);
  if (!order) throw orderNotFound();
  record({ resourceType: RESOURCE, resourceId: id, before: current, after: order });
  if (moves) emitStatusEvents(emit, order, [order.status]);
  return order;
}
