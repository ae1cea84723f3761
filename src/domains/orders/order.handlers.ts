// Order handlers: reads through the queries, writes through the service.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { orderContract } from './order.contract.js';
import { findOrder, listOrderRedemptions, listOrders } from './order.queries.js';
import { changeOrder, createOrder } from './order.service.js';

export const orderHandlers = implement(orderContract, {
  async createOrder({ input, auth, deps }) {
    return createOrder(deps.db, auth.workspaceId, input);
  },
  async getOrder({ input, auth, deps }) {
    const order = await findOrder(deps.db, auth.workspaceId, input.id);
    if (!order) throw problem('not_found', 'no such order');
    const orderIds = order.sourceId !== null ? [order.sourceId, order.id] : [order.id];
    return { ...order, redemptions: await listOrderRedemptions(deps.db, auth.workspaceId, orderIds) };
  },
  async listOrders({ input, auth, deps }) {
    return listOrders(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async updateOrder({ input, auth, deps }) {
    const { id, ...patch } = input;
    return changeOrder(deps.db, auth.workspaceId, id, patch);
  },
});
