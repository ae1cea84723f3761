// Order returns: a shop takes back part of an order, or all of it, and every figure the order moved comes back in
// proportion (discounts, gift credits, points paid and earned, tiers, referral conversions). Above orders, loyalty and
// referrals, so it sits here.
import { z } from 'zod';
import { Uuid } from '../contract/common.schemas.js';
import { defineOperation } from '../contract/operation.js';
import { OrderReturn, OrderReturnReply, ReturnBody } from './order-return.schemas.js';

const tags = ['Orders'];
const params = z.object({ id: Uuid });

export const orderReturnContract = {
  createReturn: defineOperation({
    name: 'orders.return',
    method: 'post',
    path: '/orders/{id}/returns',
    scope: 'orders:write',
    summary: 'Return part of an order, or all of it',
    description:
      'By `items` (named by `index`, `productId` or `sku`, with a `quantity`) or by a plain `amount` of what was paid, not ' +
      'both. For each redemption of the order: the discount on the returned units is recorded as its `returnedAmount`; gift ' +
      'credits and points that paid come back in proportion (rounded down, the last return gives back what is left; entries ' +
      'typed RETURN); points earned are recomputed on what remains paid (the difference reversed, the tier recomputed). Once ' +
      'nothing is left the order is RETURNED, its redemptions rolled back (reason RETURN) and a referral conversion of the ' +
      'order reverted. Returning more than is left: 409 `return_exceeds_order`. The same key again answers 200, the same ' +
      'return, `idempotent: true`. Emits `order.returned`.',
    tags,
    params,
    body: ReturnBody,
    output: OrderReturnReply,
    successStatus: 201,
    existingStatus: 200,
    idempotent: true,
  }),
  listReturns: defineOperation({
    name: 'orders.listReturns',
    method: 'get',
    path: '/orders/{id}/returns',
    scope: 'orders:read',
    summary: "An order's returns, oldest first",
    tags,
    params,
    output: z.object({ data: z.array(OrderReturn) }).meta({ id: 'OrderReturnList' }),
  }),
};
