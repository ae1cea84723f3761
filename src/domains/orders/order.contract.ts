// Order operations.
import { z } from 'zod';
import { listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { CreateOrderBody, ListOrdersQuery, OrderWithRedemptions, StoredOrder, UpdateOrderBody } from './order.schemas.js';

const tags = ['Orders'];
const params = z.object({ id: Uuid });

export const orderContract = {
  createOrder: defineOperation({
    name: 'orders.create',
    method: 'post',
    path: '/orders',
    scope: 'orders:write',
    summary: 'Create an order',
    description:
      'Emits `order.created`, then, for an order created in a later `status`, the events of the moves it stands for: ' +
      '`order.paid` (PAID), `order.paid` and `order.fulfilled` (FULFILLED), `order.canceled` (CANCELED), so that it earns ' +
      'points and confirms referrals as an order moved there does. ' +
      'A customer named by an unknown sourceId is created; an unknown customer id or email is 404. ' +
      'A sourceId that exists in the workspace is a 409 `conflict`.',
    tags,
    body: CreateOrderBody,
    output: StoredOrder,
    successStatus: 201,
  }),
  getOrder: defineOperation({
    name: 'orders.get',
    method: 'get',
    path: '/orders/{id}',
    scope: 'orders:read',
    summary: 'Get an order with its redemptions',
    tags,
    params,
    output: OrderWithRedemptions,
  }),
  listOrders: defineOperation({
    name: 'orders.list',
    method: 'get',
    path: '/orders',
    scope: 'orders:read',
    summary: 'List orders, newest first; filter by status, customerId or sourceId',
    tags,
    query: ListOrdersQuery,
    output: listEnvelope(StoredOrder, 'OrderList'),
  }),
  updateOrder: defineOperation({
    name: 'orders.update',
    method: 'patch',
    path: '/orders/{id}',
    scope: 'orders:write',
    summary: 'Update an order or move its status',
    description:
      'Status moves: CREATED → PAID or CANCELED, PAID → FULFILLED or CANCELED, each emitting `order.paid`, ' +
      '`order.canceled` or `order.fulfilled`; the current status again changes nothing; any other move is a 409 `conflict`. ' +
      'Fields left out are kept; items and metadata are replaced.',
    tags,
    params,
    body: UpdateOrderBody,
    output: StoredOrder,
  }),
};
