// Earning rules (what earns points in a program, with validation rules as conditions), tiers, and custom events.
import { z } from 'zod';
import { CustomerReference, ListQuery, Metadata, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { ExplanationCode } from '../../contract/outcomes.js';
import { ValidationRuleIds } from '../../contract/voucher-template.schemas.js';

const SAFE = Number.MAX_SAFE_INTEGER;
const PositivePoints = z.number().int().min(1).max(SAFE);

export const EarningPoints = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('FIXED'), points: PositivePoints }),
    z.object({
      type: z.literal('PER_AMOUNT'),
      every: PositivePoints.meta({ description: 'Minor units paid per step.' }),
      points: PositivePoints.meta({ description: 'Points per step: floor(paid / every) × points.' }),
    }),
  ])
  .meta({ id: 'EarningPoints', description: 'FIXED points, or PER_AMOUNT of what the customer paid (ORDER_PAID only); times the tier multiplier.' });
export type EarningPoints = z.infer<typeof EarningPoints>;

export const EarningTrigger = z.enum(['ORDER_PAID', 'SEGMENT_ENTERED', 'CUSTOM_EVENT']).meta({ id: 'EarningTrigger' });
export type EarningTrigger = z.infer<typeof EarningTrigger>;

export const EarningLimits = z
  .object({
    perMember: z.number().int().min(1).max(2_147_483_647).optional().meta({ description: 'A member earns by this rule at most this many times.' }),
  })
  .meta({ id: 'EarningLimits' });

export const EarningRule = z
  .object({
    id: Uuid,
    programId: Uuid,
    name: z.string().trim().min(1).max(200),
    active: z.boolean(),
    trigger: EarningTrigger,
    segmentId: Uuid.nullable(),
    eventName: z.string().nullable(),
    points: EarningPoints,
    validationRuleIds: ValidationRuleIds,
    limits: EarningLimits.nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'EarningRule', description: 'Earns points when its trigger happens and its validation rules hold for the order and customer.' });
export type EarningRule = z.infer<typeof EarningRule>;

const EventName = z.string().min(1).max(200);

function triggerFields(rule: { trigger?: EarningTrigger | undefined; segmentId?: string | null | undefined; eventName?: string | null | undefined; points?: EarningPoints | undefined }, ctx: z.RefinementCtx) {
  if (rule.trigger === 'SEGMENT_ENTERED' && !rule.segmentId) ctx.addIssue({ code: 'custom', message: 'SEGMENT_ENTERED needs segmentId', path: ['segmentId'] });
  if (rule.trigger === 'CUSTOM_EVENT' && !rule.eventName) ctx.addIssue({ code: 'custom', message: 'CUSTOM_EVENT needs eventName', path: ['eventName'] });
  if (rule.trigger !== undefined && rule.trigger !== 'SEGMENT_ENTERED' && rule.segmentId) {
    ctx.addIssue({ code: 'custom', message: 'segmentId is for SEGMENT_ENTERED rules', path: ['segmentId'] });
  }
  if (rule.trigger !== undefined && rule.trigger !== 'CUSTOM_EVENT' && rule.eventName) {
    ctx.addIssue({ code: 'custom', message: 'eventName is for CUSTOM_EVENT rules', path: ['eventName'] });
  }
  if (rule.trigger !== undefined && rule.trigger !== 'ORDER_PAID' && rule.points?.type === 'PER_AMOUNT') {
    ctx.addIssue({ code: 'custom', message: 'PER_AMOUNT counts what an order paid: ORDER_PAID rules only', path: ['points'] });
  }
}

export const CreateEarningRuleBody = z
  .object({
    name: EarningRule.shape.name,
    active: z.boolean().default(true),
    trigger: EarningTrigger,
    segmentId: Uuid.optional(),
    eventName: EventName.optional(),
    points: EarningPoints,
    validationRuleIds: ValidationRuleIds.default([]),
    limits: EarningLimits.optional(),
  })
  .superRefine(triggerFields);
export type CreateEarningRuleBody = z.infer<typeof CreateEarningRuleBody>;

export const UpdateEarningRuleBody = z.object({
  name: EarningRule.shape.name.optional(),
  active: z.boolean().optional(),
  segmentId: Uuid.optional(),
  eventName: EventName.optional(),
  points: EarningPoints.optional(),
  validationRuleIds: ValidationRuleIds.optional(),
  limits: EarningLimits.nullable().optional(),
});
export type UpdateEarningRuleBody = z.infer<typeof UpdateEarningRuleBody>;

export { triggerFields as checkTriggerFields };

export const Multiplier = z
  .number()
  .gt(0)
  .max(1000)
  .refine((m) => Math.abs(m * 10_000 - Math.round(m * 10_000)) < 1e-6, 'at most four decimals')
  .meta({ description: 'Earned points are multiplied by this (floor), e.g. 1.5; four decimals at most.' });

export const Tier = z
  .object({
    id: Uuid,
    programId: Uuid,
    name: z.string().trim().min(1).max(200),
    minPoints: z.number().int().min(0).max(SAFE).meta({ description: 'A member holds the tier once lifetimeEarned reaches this.' }),
    multiplier: Multiplier,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'LoyaltyTier' });
export type Tier = z.infer<typeof Tier>;

export const CreateTierBody = z.object({ name: Tier.shape.name, minPoints: Tier.shape.minPoints, multiplier: Multiplier.default(1) });
export type CreateTierBody = z.infer<typeof CreateTierBody>;
export const UpdateTierBody = CreateTierBody.partial().extend({ multiplier: Multiplier.optional() });
export type UpdateTierBody = z.infer<typeof UpdateTierBody>;

export const CustomEventBody = z.object({
  name: EventName,
  customer: CustomerReference,
  metadata: Metadata.optional(),
  referral: z
    .object({ code: z.string().min(1).max(100) })
    .optional()
    .meta({ description: "A referral code: the customer converts through it (the same refusals as at checkout; confirmed at once)." }),
  idempotencyKey: z.string().min(1).max(200).optional(),
});
export type CustomEventBody = z.infer<typeof CustomEventBody>;

export const CustomEventEffect = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('POINTS_EARNED'), memberId: Uuid, programId: Uuid, earningRuleId: Uuid, points: z.number().int(), pending: z.boolean() }),
    z.object({ type: z.literal('REFERRAL_CONVERTED'), conversionId: Uuid, programId: Uuid, code: z.string(), status: z.enum(['PENDING', 'CONFIRMED']) }),
    z.object({
      type: z.literal('REFERRAL_REFUSED'),
      code: z.string(),
      reason: ExplanationCode.extract(['voucher_not_found', 'voucher_disabled', 'referral_self_use', 'referee_not_new', 'referee_already_referred', 'referrer_limit_reached']),
    }),
  ])
  .meta({ id: 'CustomEventEffect' });

export const CustomEventOutcome = z
  .object({ id: Uuid, effects: z.array(CustomEventEffect), idempotent: z.boolean().optional() })
  .meta({ id: 'CustomEventOutcome', description: 'The recorded event and what it earned.' });
export type CustomEventOutcome = z.infer<typeof CustomEventOutcome>;

export const RuleListQuery = ListQuery;
