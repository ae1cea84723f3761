// The Discount of a discount voucher: PERCENT, AMOUNT, FIXED, UNIT, FREE_SHIPPING or BUY_X_GET_Y, discriminated on
// `type`. PERCENT, AMOUNT, FIXED and UNIT may carry a Target: they then apply to the matching items' line totals only.
import { z } from 'zod';
import { Money } from './common.schemas.js';
import { Target } from './target.schemas.js';

const ProductRef = z.string().min(1).max(200);
const DiscountTarget = Target.optional().meta({ description: "Only the items this target matches are discounted (their line totals); absent: the whole order less shipping." });

export const PercentDiscount = z.object({
  type: z.literal('PERCENT'),
  percentOff: z.number().gt(0).max(100).meta({ description: 'Percentage off the order, 0 < p <= 100.' }),
  amountLimit: Money.optional().meta({ description: 'At most this much off, in minor units.' }),
  target: DiscountTarget,
});

export const AmountDiscount = z.object({
  type: z.literal('AMOUNT'),
  amountOff: Money.meta({ description: 'Fixed amount off the order, in minor units.' }),
  target: DiscountTarget,
});

export const FixedDiscount = z.object({
  type: z.literal('FIXED'),
  fixedAmount: Money.meta({ description: 'The order total (with a target: the matching items\' total) becomes this amount, in minor units.' }),
  target: DiscountTarget,
});

export const UnitDiscount = z
  .object({
    type: z.literal('UNIT'),
    unitOff: z.number().int().min(1).max(1_000_000).meta({ description: 'Number of units of the product given free.' }),
    productId: ProductRef.optional(),
    sku: ProductRef.optional(),
    target: DiscountTarget,
  })
  .refine((d) => d.productId !== undefined || d.sku !== undefined, { message: 'a UNIT discount needs productId or sku', path: ['productId'] });

export const FreeShippingDiscount = z
  .object({ type: z.literal('FREE_SHIPPING') })
  .meta({ description: "Takes what is left of the order's shipping.amount off (nothing without shipping)." });

const Units = z.number().int().min(1).max(1_000_000);

export const BuyXGetYDiscount = z
  .object({
    type: z.literal('BUY_X_GET_Y'),
    buy: z.object({
      quantity: Units.meta({ description: 'Units of the buy target that make one group.' }),
      target: Target,
    }),
    get: z.object({
      quantity: Units.meta({ description: 'Units of the get target each group gives at percentOff.' }),
      target: Target.optional().meta({ description: 'The units given; absent: the buy target.' }),
      percentOff: z.number().gt(0).max(100).default(100).meta({ description: 'Off each unit given, 0 < p <= 100 (default 100: free).' }),
    }),
    maxApplications: z.number().int().min(1).max(1_000_000).optional().meta({ description: 'At most this many groups.' }),
  })
  .meta({
    description:
      'Each group of buy.quantity matching units gives get.quantity units of the get target at percentOff: the cheapest units first, a unit counted in one group only.',
  });

export const Discount = z
  .discriminatedUnion('type', [PercentDiscount, AmountDiscount, FixedDiscount, UnitDiscount, FreeShippingDiscount, BuyXGetYDiscount])
  .meta({ id: 'Discount', description: 'What a discount voucher takes off an order.' });
export type Discount = z.infer<typeof Discount>;
