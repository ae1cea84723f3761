// The Discount of a discount voucher: PERCENT, AMOUNT, FIXED or UNIT, discriminated on `type`.
import { z } from 'zod';
import { Money } from './common.schemas.js';

const ProductRef = z.string().min(1).max(200);

export const PercentDiscount = z.object({
  type: z.literal('PERCENT'),
  percentOff: z.number().gt(0).max(100).meta({ description: 'Percentage off the order, 0 < p <= 100.' }),
  amountLimit: Money.optional().meta({ description: 'At most this much off, in minor units.' }),
});

export const AmountDiscount = z.object({
  type: z.literal('AMOUNT'),
  amountOff: Money.meta({ description: 'Fixed amount off the order, in minor units.' }),
});

export const FixedDiscount = z.object({
  type: z.literal('FIXED'),
  fixedAmount: Money.meta({ description: 'The order total becomes this amount, in minor units.' }),
});

export const UnitDiscount = z
  .object({
    type: z.literal('UNIT'),
    unitOff: z.number().int().min(1).max(1_000_000).meta({ description: 'Number of units of the product given free.' }),
    productId: ProductRef.optional(),
    sku: ProductRef.optional(),
  })
  .refine((d) => d.productId !== undefined || d.sku !== undefined, { message: 'a UNIT discount needs productId or sku', path: ['productId'] });

export const Discount = z
  .discriminatedUnion('type', [PercentDiscount, AmountDiscount, FixedDiscount, UnitDiscount])
  .meta({ id: 'Discount', description: 'What a discount voucher takes off an order.' });
export type Discount = z.infer<typeof Discount>;
