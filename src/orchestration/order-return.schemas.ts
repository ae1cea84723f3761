// Order returns: the body of a return (items or an amount, not both) and the return as stored and answered.
import { z } from 'zod';
import { Money, Timestamp, Uuid } from '../contract/common.schemas.js';

const ProductRef = z.string().min(1).max(200);
const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

export const ReturnItem = z
  .object({
    index: z.number().int().min(0).max(499).optional().meta({ description: 'Position of the item in the order.' }),
    productId: ProductRef.optional(),
    sku: ProductRef.optional(),
    quantity: z.number().int().min(1).max(1_000_000),
  })
  .refine((i) => i.index !== undefined || i.productId !== undefined || i.sku !== undefined, { message: 'name the item by index, productId or sku' });

export const ReturnBody = z
  .object({
    items: z.array(ReturnItem).min(1).max(500).optional(),
    amount: z.number().int().min(1).max(MAX_AMOUNT).optional().meta({ description: 'A plain amount of what was paid, in minor units.' }),
    reason: z.string().min(1).max(500).optional(),
    idempotencyKey: z.string().min(1).max(200).optional(),
  })
  .refine((b) => (b.items === undefined) !== (b.amount === undefined), { message: 'give items or amount, not both', path: ['items'] });
export type ReturnBody = z.infer<typeof ReturnBody>;

export const ReturnReversals = z
  .object({
    discount: Money.meta({ description: 'Discount returned on the returned units, recorded on the redemptions as returnedAmount.' }),
    giftCredits: Money.meta({ description: 'Gift credits given back onto their cards.' }),
    pointsPaid: z.number().int().min(0).max(MAX_AMOUNT).meta({ description: 'Points that paid for the order, given back.' }),
    pointsEarned: z.number().int().min(0).max(MAX_AMOUNT).meta({ description: 'Points the order earned, taken back (pending ones first).' }),
  })
  .meta({ id: 'ReturnReversals' });

export const OrderReturn = z
  .object({
    id: Uuid,
    orderId: Uuid,
    amount: Money.meta({ description: 'The share of what the customer paid that comes back.' }),
    items: z.array(z.object({ index: z.number().int(), productId: z.string().optional(), sku: z.string().optional(), quantity: z.number().int() })),
    reversals: ReturnReversals,
    reason: z.string().optional(),
    createdAt: Timestamp,
  })
  .meta({ id: 'OrderReturn' });
export type OrderReturn = z.infer<typeof OrderReturn>;

export const OrderReturnReply = OrderReturn.extend({
  status: z.enum(['PARTIALLY_RETURNED', 'RETURNED', 'CANCELED']).meta({ description: "The order's status after the return." }),
  idempotent: z.literal(true).optional().meta({ description: 'The same idempotency key again: the return it made.' }),
}).meta({ id: 'OrderReturnReply' });
export type OrderReturnReply = z.infer<typeof OrderReturnReply>;
