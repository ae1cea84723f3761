// Order returns, and the order update whose cancel returns the order whole first. After a commit, the partitions
// caching a card the return credited outside the engine read it again before their next decision.
import { implement, type HandlerContext } from '../contract/handler.js';
import type { Operation } from '../contract/operation.js';
import { problem } from '../contract/problems.js';
import { changeOrder, orderContract } from '../domains/orders/index.js';
import { listReturns } from './order-return.queries.js';
import { returnBeforeCancel, returnOrder, type ReturnContext } from './order-return.service.js';
import { orderReturnContract } from './order-return.contract.js';

function returnContext(ctx: HandlerContext<Operation>): ReturnContext {
  return { engine: ctx.deps.engine, trail: ctx.auditTrail(), changed: new Set() };
}

/**
 * The returns (and cancels) of one order in this process, each after the one before it (ServiceDeps.rowTurns): they
 * take turns on the order's row lock anyway, and waiting here holds no database connection (a return that leaves
 * nothing waits for the engine's rollbacks, which need one from the same pool, while it holds the lock). Processes
 * take turns on the row lock.
 */
function inTurn<T>(ctx: HandlerContext<Operation>, orderId: string, work: () => Promise<T>): Promise<T> {
  return ctx.deps.rowTurns.run(`order:${orderId.toLowerCase()}`, work);
}

async function tellPartitions(ctx: HandlerContext<Operation>, workspaceId: string, changed: ReadonlySet<string>): Promise<void> {
  await Promise.all([...changed].map((code) => ctx.deps.engine.voucherChanged(workspaceId, code)));
}

export const orderReturnHandlers = implement(orderReturnContract, {
  async createReturn(ctx) {
    const { input, actor, mutate } = ctx;
    const returning = returnContext(ctx as HandlerContext<Operation>);
    const ask = input.items ? { items: input.items } : { amount: input.amount! };
    const reply = await inTurn(ctx as HandlerContext<Operation>, input.id, () => mutate((unit) => returnOrder(unit, returning, actor.workspaceId, input.id, { ask, reason: input.reason })));
    await tellPartitions(ctx as HandlerContext<Operation>, actor.workspaceId, returning.changed);
    return reply;
  },
  async listReturns({ input, actor, deps }) {
    const exists = await deps.db.query('SELECT 1 FROM orders WHERE workspace_id = $1 AND id = $2', [actor.workspaceId, input.id]);
    if (exists.rowCount === 0) throw problem('not_found', 'no such order');
    return { data: await listReturns(deps.db, actor.workspaceId, input.id) };
  },
});

export const orderUpdateHandlers = implement(
  { updateOrder: orderContract.updateOrder },
  {
    async updateOrder(ctx) {
      const { input, actor, mutate } = ctx;
      const { id, ...patch } = input;
      const returning = returnContext(ctx as HandlerContext<Operation>);
      const order = await inTurn(ctx as HandlerContext<Operation>, id, () =>
        mutate(async (unit) => {
          if (patch.status === 'CANCELED') await returnBeforeCancel(unit, returning, actor.workspaceId, id);
          return changeOrder(unit, actor.workspaceId, id, patch);
        }),
      );
      await tellPartitions(ctx as HandlerContext<Operation>, actor.workspaceId, returning.changed);
      return order;
    },
  },
);
