// Order handlers: reads through the queries, writes through the service in their operation's unit of work.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { orderContract } from './order.contract.js';
import { findOrder, listOrderRedemptions, listOrders } from './order.queries.js';
import { createOrder } from './order.service.js';

// orders.update is bound in orchestration/order-return.handlers.ts: a cancel returns the order whole first.
const { updateOrder: _boundAbove, ...ownOperations } = orderContract;

export const orderHandlers = implement(ownOperations, {
  async createOrder({ input, actor, mutate }) {
    return mutate((unit) => createOrder(unit, actor.workspaceId, input));
  },
  async getOrder({ input, actor, deps }) {
    const order = await findOrder(deps.db, actor.workspaceId, input.id);
    if (!order) throw problem('not_found', 'no such order');
    const orderIds = order.sourceId !== null ? [order.sourceId, order.id] : [order.id];
    return { ...order, redemptions: await listOrderRedemptions(deps.db, actor.workspaceId, orderIds) };
  },
  async listOrders({ input, actor, deps }) {
    return listOrders(deps.db, deps.cursors, actor.workspaceId, input);
  },
});
