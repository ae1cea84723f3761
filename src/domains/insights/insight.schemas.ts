// Insights: read-only aggregates of a workspace (redemption figures per period, refusals by code, top campaigns,
// budget burn, gift card liability, webhook delivery health, loyalty and referral figures) and the ranges they are asked for.
import { z } from 'zod';
import { Timestamp, Uuid } from '../../contract/common.schemas.js';
import { BudgetLimit } from '../../contract/budget.schemas.js';

/** The longest range of each kind of question: beyond it the answer is a 400. */
export const RANGE_LIMITS_DAYS = Object.freeze({ hour: 31, day: 366 });

const Count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const Amount = Count.meta({ description: 'Minor units (cents).' });

const Range = {
  from: Timestamp.optional().meta({
    description: 'Start of the range (inclusive); default 30 days before `to`. Periods that overlap the range are reported whole.',
  }),
  to: Timestamp.optional().meta({ description: 'End of the range (exclusive); default now.' }),
};

export const RedemptionInsightsQuery = z.object({
  ...Range,
  interval: z.enum(['day', 'hour']).default('day').meta({
    description: `Period length, in the workspace's time zone. A range spans at most ${RANGE_LIMITS_DAYS.day} days by day and ${RANGE_LIMITS_DAYS.hour} days by hour.`,
  }),
  campaignId: Uuid.optional().meta({ description: "Only this campaign's vouchers and tiers." }),
});
export type RedemptionInsightsQuery = z.infer<typeof RedemptionInsightsQuery>;

export const RedemptionPeriod = z
  .object({
    period: Timestamp.meta({ description: "Start of the period (a day or an hour in the workspace's time zone), as a UTC instant." }),
    currency: z.string().nullable().meta({ description: "The order's currency, else the voucher's; null when neither said." }),
    redemptions: Count.meta({ description: 'Redemptions committed in the period (gross: later rollbacks do not take them back).' }),
    rollbacks: Count.meta({ description: 'Rollbacks committed in the period.' }),
    discountAmount: Amount.meta({ description: 'Discounts given by those redemptions.' }),
    giftAmount: Amount.meta({ description: 'Gift credits used by those redemptions (not a discount).' }),
    rolledBackAmount: Amount.meta({ description: 'What the rollbacks gave back: discounts and gift credits.' }),
    rolledBackDiscountAmount: Amount,
    rolledBackGiftAmount: Amount,
  })
  .meta({ id: 'RedemptionPeriod', description: 'Exact figures of one period and currency; periods without any are left out.' });

export const ReturnPeriod = z
  .object({
    period: Timestamp.meta({ description: "Start of the period (a day or an hour in the workspace's time zone), as a UTC instant." }),
    currency: z.string().nullable().meta({ description: "The order's currency." }),
    returns: Count.meta({ description: 'Order returns made in the period (a cancel that gave an order back counts as one).' }),
    returnedAmount: Amount.meta({ description: 'What the customers paid that came back (the returns\' amounts).' }),
    returnedDiscountAmount: Amount.meta({ description: 'Discounts returned on the returned units.' }),
    returnedGiftAmount: Amount.meta({ description: 'Gift credits given back onto their cards.' }),
    returnedPointsPaid: Count.meta({ description: 'Points that paid for the orders, given back.' }),
    returnedPointsEarned: Count.meta({ description: 'Points the orders had earned, taken back.' }),
  })
  .meta({ id: 'ReturnPeriod', description: 'What order returns gave back in one period and currency; periods without any are left out.' });

export const RedemptionInsights = z
  .object({
    data: z.array(RedemptionPeriod),
    returns: z
      .array(ReturnPeriod)
      .optional()
      .meta({ description: "The workspace's order returns per period, oldest first; left out when `campaignId` is given (a return is the order's, not a campaign's)." }),
  })
  .meta({ id: 'RedemptionInsights', description: 'Redemption figures per period, oldest first.' });

export const FailureInsightsQuery = z.object({
  ...Range,
  campaignId: Uuid.optional().meta({ description: "Only refusals of this campaign's vouchers and tiers." }),
});
export type FailureInsightsQuery = z.infer<typeof FailureInsightsQuery>;

export const FailureCount = z
  .object({
    code: z.string().meta({ description: 'The explanation code of the refusal.', example: 'redemption_limit_reached' }),
    count: Count.meta({ description: 'Refused redemptions and stacks with this code.' }),
    redemptions: Count.meta({ description: 'Of which single redemptions (tiers included).' }),
    stacks: Count.meta({ description: 'Of which stacks (counted once, under the code of the voucher that failed it).' }),
    validations: Count.meta({ description: 'Validations answered not valid with this code (not in `count`).' }),
  })
  .meta({ id: 'FailureCount' });

export const FailureInsights = z
  .object({ data: z.array(FailureCount) })
  .meta({
    id: 'FailureInsights',
    description: 'Refusals by explanation code, most frequent first. Counted in memory and written every 2 s: a crash loses at most the last 2 s.',
  });

export const CampaignInsightsQuery = z.object({
  ...Range,
  limit: z.coerce.number().int().min(1).max(100).default(10).meta({ description: 'How many campaigns, 1..100.' }),
});
export type CampaignInsightsQuery = z.infer<typeof CampaignInsightsQuery>;

export const CampaignFigures = z
  .object({
    campaignId: Uuid,
    name: z.string().nullable().meta({ description: 'null when the campaign was deleted since.' }),
    currency: z.string().nullable(),
    redemptions: Count,
    discountAmount: Amount,
    giftAmount: Amount,
    rollbacks: Count,
  })
  .meta({ id: 'CampaignFigures' });

export const CampaignInsights = z
  .object({ data: z.array(CampaignFigures) })
  .meta({ id: 'CampaignInsights', description: 'Campaigns with the most redemptions in the range (per currency), most first.' });

export const BudgetInsightsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'How many campaigns, 1..100.' }),
});
export type BudgetInsightsQuery = z.infer<typeof BudgetInsightsQuery>;

export const BudgetBurn = z
  .object({
    period: z.enum(['total', 'daily', 'weekly', 'monthly']),
    key: z.string().meta({ description: 'The current period, as the budget counts it.', example: 'day:2026-11-21' }),
    limit: BudgetLimit,
    used: z.object({ redemptions: Count, discountAmount: Amount }),
    burn: z.number().min(0).meta({ description: 'The larger share of a limit used (1 = exhausted).', example: 0.42 }),
    resetsAt: Timestamp.nullable().meta({ description: 'When the period ends and its usage starts again from 0; null for total.' }),
  })
  .meta({ id: 'BudgetBurn' });

export const CampaignBudgetBurn = z
  .object({ campaignId: Uuid, name: z.string(), active: z.boolean(), limits: z.array(BudgetBurn) })
  .meta({ id: 'CampaignBudgetBurn' });

export const BudgetInsights = z
  .object({ data: z.array(CampaignBudgetBurn) })
  .meta({ id: 'BudgetInsights', description: 'Budgeted campaigns, the most burnt first: each limit of the current periods against its usage.' });

export const GiftCardLiability = z
  .object({
    currency: z.string().nullable(),
    outstanding: Amount.meta({ description: 'Sum of the balances: credits customers can still spend.' }),
    cards: Count.meta({ description: 'Gift cards in this currency.' }),
    cardsWithBalance: Count,
  })
  .meta({ id: 'GiftCardLiability' });

export const GiftCardInsights = z
  .object({ data: z.array(GiftCardLiability) })
  .meta({ id: 'GiftCardInsights', description: 'Outstanding gift card balances per currency, as of now.' });

export const WebhookInsights = z
  .object({
    deliveries: z
      .object({ pending: Count, delivered: Count, retryScheduled: Count, dead: Count })
      .meta({ description: 'Deliveries by status.' }),
    oldestPendingAt: Timestamp.nullable().meta({ description: 'Creation of the oldest delivery not yet delivered (pending or retry scheduled).' }),
    oldestPendingAgeSeconds: Count.nullable(),
    last24h: z
      .object({
        attempts: Count,
        succeeded: Count,
        successRate: z.number().min(0).max(1).nullable().meta({ description: 'Succeeded attempts over all attempts; null without any.' }),
      })
      .meta({ description: 'Delivery attempts of the last 24 hours.' }),
  })
  .meta({ id: 'WebhookInsights', description: 'Webhook delivery health of the workspace, as of now.' });

export const ReferralInsightsQuery = z.object({
  ...Range,
  programId: Uuid.optional().meta({ description: 'Only this referral program.' }),
  limit: z.coerce.number().int().min(1).max(100).default(10).meta({ description: 'How many top referrers, 1..100.' }),
});
export type ReferralInsightsQuery = z.infer<typeof ReferralInsightsQuery>;

export const ReferralInsights = z
  .object({
    conversions: z.object({ pending: Count, confirmed: Count, reverted: Count }).meta({ description: 'Conversions made in the range, by their status now.' }),
    rewards: z
      .object({ granted: Count, failed: Count, reverted: Count })
      .meta({ description: 'Rewards of those conversions (each side and reward once), by their status now.' }),
    topReferrers: z
      .array(z.object({ customerId: Uuid, programId: Uuid, code: z.string(), confirmed: Count, pending: Count }))
      .meta({ description: 'Referrers with the most confirmed conversions in the range (then pending), most first.' }),
  })
  .meta({ id: 'ReferralInsights' });

export const LoyaltyInsightsQuery = z.object({
  ...Range,
  interval: z.enum(['day', 'hour']).default('day').meta({
    description: `Length of the periods of \`periods\`, in the workspace's time zone. A range spans at most ${RANGE_LIMITS_DAYS.day} days by day and ${RANGE_LIMITS_DAYS.hour} days by hour.`,
  }),
  programId: Uuid.optional().meta({ description: 'Only this loyalty program.' }),
});
export type LoyaltyInsightsQuery = z.infer<typeof LoyaltyInsightsQuery>;

const PointMovements = {
  earned: Count.meta({ description: 'Granted by earning rules (pending points count when granted).' }),
  spent: Count.meta({ description: 'Paid at checkout and for rewards.' }),
  refunded: Count.meta({ description: 'Given back by rollbacks, reward refunds and order returns (points that paid).' }),
  expired: Count,
  reversed: Count.meta({ description: 'Taken back by canceled and returned orders (pending ones canceled included).' }),
  adjusted: z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).meta({ description: 'Net manual adjustments (signed).' }),
};

export const LoyaltyPeriod = z
  .object({
    period: Timestamp.meta({ description: "Start of the period (a day or an hour in the workspace's time zone), as a UTC instant." }),
    ...PointMovements,
  })
  .meta({ id: 'LoyaltyPeriod', description: 'Points moved in one period; a period without movement is left out.' });

export const LoyaltyInsights = z
  .object({
    points: z.object(PointMovements).meta({ description: 'Ledger movements in the range (the sum of `periods`).' }),
    periods: z.array(LoyaltyPeriod).meta({ description: 'The same movements per period, oldest first.' }),
    pending: Count.meta({ description: 'Pending points now.' }),
    outstanding: Count.meta({ description: 'Points members hold now (positive balances): the liability.' }),
    members: Count,
    tiers: z
      .array(
        z.object({
          tierId: Uuid.nullable(),
          name: z.string().nullable(),
          programId: Uuid.nullable(),
          minPoints: Count.nullable(),
          members: Count,
        }),
      )
      .meta({ description: "Members per tier now: first those without a tier (tierId null), then each program's tiers from the lowest, empty ones included." }),
  })
  .meta({ id: 'LoyaltyInsights' });
