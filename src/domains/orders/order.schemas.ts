// Order resources: the stored order, its status moves, its create/update bodies and the list filters.
import { z } from 'zod';
import { boundLineTotals, Currency, CustomerReference, ListQuery, Metadata, Money, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { OrderItem, RedemptionSummary } from '../../contract/checkout.schemas.js';

export const OrderStatus = z.enum(['CREATED', 'PAID', 'CANCELED', 'FULFILLED', 'PARTIALLY_RETURNED', 'RETURNED']).meta({
  id: 'OrderStatus',
  description:
    'CREATED → PAID | CANCELED; PAID → FULFILLED | CANCELED; PARTIALLY_RETURNED → CANCELED. Returns (POST /orders/{id}/returns) ' +
    'move an order to PARTIALLY_RETURNED, then RETURNED once nothing is left.',
});
export type OrderStatus = z.infer<typeof OrderStatus>;

/** The moves an update may make; setting the current status again is a no-op. */
export const ORDER_STATUS_MOVES: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = Object.freeze({
  CREATED: ['PAID', 'CANCELED'],
  PAID: ['FULFILLED', 'CANCELED'],
  CANCELED: [],
  FULFILLED: [],
  PARTIALLY_RETURNED: ['CANCELED'],
  RETURNED: [],
});

/** The statuses an order may be created in (the returned ones are reached by returns only). */
export const CreatedOrderStatus = z.enum(['CREATED', 'PAID', 'CANCELED', 'FULFILLED']);

const OrderSourceId = z.string().min(1).max(200).meta({ description: "The caller's own order id, unique per workspace." });
const OrderItems = z.array(OrderItem).max(500).superRefine(boundLineTotals);

// Named StoredOrder: `Order` is the cart a validation or redemption carries (redemption.schemas.ts).
export const StoredOrder = z
  .object({
    id: Uuid,
    sourceId: OrderSourceId.nullable(),
    status: OrderStatus,
    amount: Money.meta({ description: 'Order total in minor units.' }),
    currency: Currency,
    items: OrderItems,
    customerId: Uuid.nullable(),
    metadata: Metadata,
    returnedAmount: Money.meta({ description: 'The sum of its returns (what the customer paid that came back).' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'StoredOrder', description: 'An order kept by the service; redemptions name it by sourceId or id.' });
export type StoredOrder = z.infer<typeof StoredOrder>;

export const OrderRedemption = RedemptionSummary.pick({ id: true, voucherCode: true, amount: true, status: true, createdAt: true });
export type OrderRedemption = z.infer<typeof OrderRedemption>;

export const OrderWithRedemptions = StoredOrder.extend({
  redemptions: z
    .array(OrderRedemption)
    .meta({ description: "Redemptions whose orderId is this order's sourceId or id, newest first, at most 100." }),
}).meta({ id: 'OrderWithRedemptions' });
export type OrderWithRedemptions = z.infer<typeof OrderWithRedemptions>;

export const CreateOrderBody = z.object({
  sourceId: OrderSourceId.optional(),
  amount: StoredOrder.shape.amount,
  currency: Currency,
  items: OrderItems.optional(),
  customer: CustomerReference.optional(),
  metadata: Metadata.optional(),
  status: CreatedOrderStatus.default('CREATED'),
});
export type CreateOrderBody = z.infer<typeof CreateOrderBody>;

/** Fields left out stay as they are; items and metadata are replaced as a whole. */
export const UpdateOrderBody = StoredOrder.pick({ status: true, metadata: true, amount: true, items: true }).partial();

export type UpdateOrderBody = z.infer<typeof UpdateOrderBody>;

export const ListOrdersQuery = ListQuery.extend({
  status: OrderStatus.optional(),
  customerId: Uuid.optional(),
  sourceId: OrderSourceId.optional().meta({ description: 'Only the order with this sourceId (exact).' }),
});
export type ListOrdersQuery = z.infer<typeof ListOrdersQuery>;
