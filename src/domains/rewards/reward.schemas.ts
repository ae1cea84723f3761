// Rewards catalog resources: rewards, custom reward types, the rewards a program offers at a price, and reward
// redemptions with their outcome.
import { z } from 'zod';
import { ListQuery, Metadata, Money, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { RefusalFields } from '../../contract/checkout.schemas.js';

const Points = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const RewardKind = z.enum(['DISCOUNT_VOUCHER', 'GIFT_CREDITS', 'LOYALTY_POINTS', 'MATERIAL', 'CUSTOM']);
export type RewardKind = z.infer<typeof RewardKind>;

export const AttributeSpec = z
  .object({
    type: z.enum(['string', 'integer', 'boolean', 'enum']),
    values: z.array(z.string().min(1).max(200)).min(1).max(100).optional().meta({ description: 'The allowed values of an enum.' }),
    required: z.boolean().default(false),
  })
  .refine((a) => (a.type === 'enum') === (a.values !== undefined), { message: 'values are for (and required by) enum attributes', path: ['values'] });

const AttributeName = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'letters, digits and _, starting with a letter');

export const AttributesSchema = z
  .object({ properties: z.record(AttributeName, AttributeSpec).refine((p) => Object.keys(p).length <= 50, 'at most 50 attributes') })
  .meta({ id: 'RewardAttributesSchema' });
export type AttributesSchema = z.infer<typeof AttributesSchema>;

export const Attributes = z.record(z.string(), z.union([z.string().max(1000), z.number(), z.boolean()])).meta({ id: 'RewardAttributes' });
export type Attributes = z.infer<typeof Attributes>;

export const Fulfillment = z.enum(['NONE', 'MANUAL', 'WEBHOOK']);

export const RewardType = z
  .object({
    id: Uuid,
    key: z.string().regex(/^[a-z][a-z0-9_.-]{0,63}$/, 'lowercase letters, digits, _ . -, starting with a letter'),
    name: z.string().trim().min(1).max(200),
    attributesSchema: AttributesSchema,
    fulfillment: Fulfillment.meta({ description: 'NONE: done at redemption; MANUAL or WEBHOOK: PENDING_FULFILLMENT until fulfilled.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'RewardType' });
export type RewardType = z.infer<typeof RewardType>;

export const CreateRewardTypeBody = RewardType.pick({ key: true, name: true, attributesSchema: true, fulfillment: true });
export type CreateRewardTypeBody = z.infer<typeof CreateRewardTypeBody>;

export const Reward = z
  .object({
    id: Uuid,
    name: z.string().trim().min(1).max(200),
    type: RewardKind,
    campaignId: Uuid.optional().meta({ description: 'DISCOUNT_VOUCHER: the campaign a voucher is made from; GIFT_CREDITS: of the gift card; LOYALTY_POINTS: the program.' }),
    amount: Money.optional().meta({ description: 'GIFT_CREDITS: minor units; LOYALTY_POINTS: points.' }),
    rewardTypeId: Uuid.optional(),
    attributes: Attributes,
    stock: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().meta({ description: 'Units left; null: unlimited.' }),
    redeemed: z.number().int(),
    limitPerMember: z.number().int().min(1).max(1_000_000).nullable().meta({ description: 'Redemptions per member (refunded and canceled ones do not count); null: no limit.' }),
    codePool: z.boolean().meta({ description: 'True once codes were added (`POST /rewards/{id}/codes`): each redemption hands out one, and the stock is the count of codes left.' }),
    active: z.boolean(),
    startDate: Timestamp.nullable(),
    expirationDate: Timestamp.nullable(),
    metadata: Metadata,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Reward' });
export type Reward = z.infer<typeof Reward>;

export const CreateRewardBody = z.object({
  name: Reward.shape.name,
  type: RewardKind,
  campaignId: Uuid.optional(),
  amount: Money.optional(),
  rewardTypeId: Uuid.optional(),
  attributes: Attributes.optional(),
  stock: Reward.shape.stock.optional(),
  limitPerMember: Reward.shape.limitPerMember.optional(),
  active: z.boolean().default(true),
  startDate: Timestamp.nullable().optional(),
  expirationDate: Timestamp.nullable().optional(),
  metadata: Metadata.default({}),
});
export type CreateRewardBody = z.infer<typeof CreateRewardBody>;

export const UpdateRewardBody = CreateRewardBody.pick({ name: true, attributes: true, stock: true, limitPerMember: true, active: true, startDate: true, expirationDate: true, metadata: true })
  .partial()
  .extend({ active: z.boolean().optional(), metadata: Metadata.optional() });
export type UpdateRewardBody = z.infer<typeof UpdateRewardBody>;

export const TierPrice = z.object({ tierId: Uuid, points: Points }).meta({ id: 'RewardTierPrice', description: "The price for members of one of the program's tiers." });

export const ProgramReward = z
  .object({
    id: Uuid,
    programId: Uuid,
    rewardId: Uuid,
    points: Points.meta({ description: 'The price in points (for members of a tier without a price of its own).' }),
    tierPrices: z.array(TierPrice),
    reward: Reward,
    createdAt: Timestamp,
  })
  .meta({ id: 'LoyaltyProgramReward' });
export type ProgramReward = z.infer<typeof ProgramReward>;

export const OfferRewardBody = z.object({
  rewardId: Uuid,
  points: Points.meta({ description: 'The price in points.' }),
  tierPrices: z
    .array(TierPrice)
    .max(50)
    .refine((prices) => new Set(prices.map((p) => p.tierId)).size === prices.length, 'one price per tier')
    .default([])
    .meta({ description: "Prices for the members of some of the program's tiers; offering again replaces them." }),
});
export type OfferRewardBody = z.infer<typeof OfferRewardBody>;

/** What a member of the given tier pays for an offer. */
export function priceFor(offer: Pick<ProgramReward, 'points' | 'tierPrices'>, tierId: string | undefined): number {
  return (tierId && offer.tierPrices.find((p) => p.tierId === tierId)?.points) || offer.points;
}

export const MemberReward = ProgramReward.extend({
  price: Points.meta({ description: "What this member pays: its tier's price, else the offer's points." }),
  affordable: z.boolean().meta({ description: "The member's balance covers the price." }),
  pointsMissing: z.number().int().min(0).meta({ description: 'Points the member lacks for the price; 0 when affordable.' }),
}).meta({ id: 'MemberReward' });

export const RewardRedemptionStatus = z.enum(['COMPLETED', 'PENDING_FULFILLMENT', 'FULFILLED', 'CANCELED', 'REFUNDED']);

export const Issued = z
  .object({
    voucherCode: z.string().optional(),
    amount: Money.optional(),
    points: z.number().int().optional(),
    code: z.string().optional().meta({ description: "A code from the reward's pool." }),
  })
  .meta({ id: 'RewardIssued', description: "What the redemption issued to the member: a voucher, gift credits, points, or a code of the reward's pool." });

export const RewardRedemption = z
  .object({ id: Uuid, memberId: Uuid, rewardId: Uuid, points: Points, status: RewardRedemptionStatus, issued: Issued.optional(), createdAt: Timestamp })
  .meta({ id: 'RewardRedemption' });
export type RewardRedemption = z.infer<typeof RewardRedemption>;

export const RedeemRewardBody = z.object({ rewardId: Uuid, idempotencyKey: z.string().min(1).max(200).optional() });

export const RewardRedemptionOutcome = z
  .discriminatedUnion('ok', [
    z
      .object({
        ok: z.literal(true),
        idempotent: z.boolean().optional(),
        rewardRedemption: RewardRedemption,
        member: z.object({ balance: z.number().int() }).optional(),
      })
      .meta({ id: 'RewardRedeemed' }),
    z.object({ ok: z.literal(false), ...RefusalFields, idempotent: z.boolean().optional() }).meta({ id: 'RewardRedemptionRefused' }),
  ])
  .meta({ id: 'RewardRedemptionOutcome', description: 'A reward redemption decision, discriminated on `ok`.' });
export type RewardRedemptionOutcome = z.infer<typeof RewardRedemptionOutcome>;

const PoolCode = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\s\p{Cc}]+$/u, 'no spaces or control characters');

export const AddRewardCodesBody = z.object({
  codes: z.array(PoolCode).min(1).max(1_000).meta({ description: 'Codes to hand out, one per redemption; codes in the pool already are skipped.' }),
});

export const RewardCodesAdded = z
  .object({ rewardId: Uuid, added: z.number().int(), skipped: z.number().int(), stock: z.number().int() })
  .meta({ id: 'RewardCodesAdded', description: 'How many codes joined the pool, how many were there already (or repeated), and the stock now.' });
export type RewardCodesAdded = z.infer<typeof RewardCodesAdded>;

export const FulfillmentBody = z.object({ status: z.enum(['FULFILLED', 'CANCELED']) });

export const RewardListQuery = ListQuery;
