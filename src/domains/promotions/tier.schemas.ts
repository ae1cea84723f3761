// Automatic promotion tiers: discounts a PROMOTION campaign applies without a code, under its rules and schedule.
import { z } from 'zod';
import { CustomerReference, ListQuery, Metadata, Money, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { Order, OrderTotals, RedeemBody } from '../../contract/checkout.schemas.js';
import { Schedule } from '../../contract/schedule.schemas.js';
import { Discount } from '../../contract/discount.schemas.js';
import { BestDeal } from '../../contract/stack-preview.schemas.js';
import { PerCustomerLimit, Priority, RedemptionLimit, ValidationRuleIds } from '../../contract/voucher-template.schemas.js';

export const PromotionTier = z
  .object({
    id: Uuid,
    campaignId: Uuid,
    name: z.string().trim().min(1).max(200),
    discount: Discount,
    validationRuleIds: ValidationRuleIds,
    priority: Priority.nullable().meta({ description: 'Higher goes first in a stack; null takes the campaign’s.' }),
    exclusive: z.boolean().nullable().meta({ description: 'Null takes the campaign’s.' }),
    active: z.boolean(),
    schedule: Schedule.nullable(),
    maxDiscount: Money.nullable().meta({ description: 'At most this much off per redemption, in minor units.' }),
    redemption: z.object({ limit: z.number().int().nullable(), perCustomerLimit: z.number().int().nullable(), redeemedCount: z.number().int() }),
    metadata: Metadata,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'PromotionTier' });
export type PromotionTier = z.infer<typeof PromotionTier>;

export const CreateTierBody = z.object({
  name: PromotionTier.shape.name,
  discount: Discount,
  validationRuleIds: ValidationRuleIds.default([]),
  priority: Priority.nullable().optional(),
  exclusive: z.boolean().nullable().optional(),
  active: z.boolean().default(true),
  schedule: Schedule.nullable().optional(),
  maxDiscount: Money.nullable().optional(),
  redemptionLimit: RedemptionLimit.nullable().optional(),
  perCustomerLimit: PerCustomerLimit.nullable().optional(),
  metadata: Metadata.default({}),
});
export type CreateTierBody = z.infer<typeof CreateTierBody>;

export const UpdateTierBody = z.object({
  name: PromotionTier.shape.name.optional(),
  discount: Discount.optional(),
  validationRuleIds: ValidationRuleIds.optional(),
  priority: Priority.nullable().optional(),
  exclusive: z.boolean().nullable().optional(),
  active: z.boolean().optional(),
  schedule: Schedule.nullable().optional(),
  maxDiscount: Money.nullable().optional(),
  redemptionLimit: RedemptionLimit.nullable().optional(),
  perCustomerLimit: PerCustomerLimit.nullable().optional(),
  metadata: Metadata.optional(),
});
export type UpdateTierBody = z.infer<typeof UpdateTierBody>;

export const TierListQuery = ListQuery;

/** A voucher redemption's body, with the order required and no gift amount. */
export const RedeemTierBody = RedeemBody.omit({ amount: true }).extend({ order: Order });

export const CheckoutBody = z.object({ order: Order, customer: CustomerReference.optional() });

/** One thing the customer can use for this cart, with what it gives. */
export const QualifiedOffer = z
  .object({
    kind: z.enum(['PROMOTION_TIER', 'VOUCHER', 'GIFT_CARD']),
    tierId: Uuid.optional(),
    code: z.string().optional().meta({ description: 'The voucher or gift card code (not for tiers).' }),
    campaignId: Uuid.optional(),
    name: z.string().optional(),
    discount: z.object({ type: z.string(), amount: Money }).meta({ description: 'What it takes off this order alone (gift cards: the credits it would apply).' }),
    order: OrderTotals.optional(),
    priority: z.number().int(),
    exclusive: z.boolean(),
  })
  .meta({ id: 'QualifiedOffer' });
export type QualifiedOffer = z.infer<typeof QualifiedOffer>;

export const PromotionsValidation = z
  .object({ promotions: z.array(QualifiedOffer).meta({ description: 'The tiers that apply, best deal first.' }) })
  .meta({ id: 'PromotionsValidation' });

export const QualificationBody = CheckoutBody.extend({
  scope: z.enum(['ALL', 'AUTOMATIC', 'CUSTOMER_VOUCHERS']).default('ALL').meta({
    description: 'AUTOMATIC: promotion tiers; CUSTOMER_VOUCHERS: vouchers and gift cards assigned or published to the customer.',
  }),
  limit: z.number().int().min(1).max(100).default(20),
  codes: z.array(z.string().min(1).max(200)).max(30).optional().meta({
    description: 'Codes the customer typed in: weighed with the other offers, whatever the scope (listed in `data` when they qualify).',
  }),
  bestDeal: z.boolean().default(false).meta({
    description: 'Also answer `bestDeal`: of the discounts in `data`, the stack the stacking rules allow with the largest total discount.',
  }),
});

export const Qualification = z
  .object({
    data: z.array(QualifiedOffer).meta({ description: 'Best deal first (largest amount; then priority; then name), at most `limit`.' }),
    bestDeal: BestDeal.optional().meta({ description: 'With `bestDeal: true`: the stack to redeem for the largest discount, and its totals.' }),
  })
  .meta({ id: 'Qualification' });
export type Qualification = z.infer<typeof Qualification>;
