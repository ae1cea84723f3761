// Insights operations: read-only aggregates (scope insights:read), answered from a cache of a few seconds; the loyalty and
// referral figures are read from their own rollups and tables, never from redemptions.
import { defineOperation } from '../../contract/operation.js';
import {
  BudgetInsights,
  BudgetInsightsQuery,
  CampaignInsights,
  CampaignInsightsQuery,
  FailureInsights,
  FailureInsightsQuery,
  GiftCardInsights,
  RedemptionInsights,
  RedemptionInsightsQuery,
  LoyaltyInsights,
  LoyaltyInsightsQuery,
  ReferralInsights,
  ReferralInsightsQuery,
  WebhookInsights,
} from './insight.schemas.js';

const tags = ['Insights'];
const CACHED = 'Answers may be up to 2 s old (a short cache per workspace and question).';

export const insightContract = {
  redemptionInsights: defineOperation({
    name: 'insights.redemptions',
    method: 'get',
    path: '/insights/redemptions',
    scope: 'insights:read',
    summary: "Redemptions, rollbacks, discounts and gift credits per day or hour, in the workspace's time zone",
    description:
      'Exact counts of committed redemptions and rollbacks, read from a rollup the engine updates in the statement ' +
      'that commits them (never from the redemptions). Gross figures: a rollback counts in its own period. ' +
      `Visible within 5 s of the commit. ${CACHED}`,
    tags,
    query: RedemptionInsightsQuery,
    output: RedemptionInsights,
  }),
  failureInsights: defineOperation({
    name: 'insights.failures',
    method: 'get',
    path: '/insights/failures',
    scope: 'insights:read',
    summary: 'Refused redemptions and stacks by explanation code (validations labelled apart)',
    description: `Counted by the deciding partition in memory and written every 2 s (a crash loses at most that); by UTC hour. ${CACHED}`,
    tags,
    query: FailureInsightsQuery,
    output: FailureInsights,
  }),
  campaignInsights: defineOperation({
    name: 'insights.campaigns',
    method: 'get',
    path: '/insights/campaigns',
    scope: 'insights:read',
    summary: 'Top campaigns by redemptions in a range',
    description: CACHED,
    tags,
    query: CampaignInsightsQuery,
    output: CampaignInsights,
  }),
  budgetInsights: defineOperation({
    name: 'insights.budgets',
    method: 'get',
    path: '/insights/budgets',
    scope: 'insights:read',
    summary: 'Budget burn: each budget limit of the current periods against its usage, and when it resets',
    description: CACHED,
    tags,
    query: BudgetInsightsQuery,
    output: BudgetInsights,
  }),
  giftCardInsights: defineOperation({
    name: 'insights.giftCards',
    method: 'get',
    path: '/insights/gift-cards',
    scope: 'insights:read',
    summary: 'Gift card liability: outstanding balances per currency',
    description: CACHED,
    tags,
    output: GiftCardInsights,
  }),
  loyaltyInsights: defineOperation({
    name: 'insights.loyalty',
    method: 'get',
    path: '/insights/loyalty',
    scope: 'insights:read',
    summary: 'Loyalty figures: points earned, spent, refunded, expired, reversed and adjusted in the range and per period; pending, outstanding and members per tier now',
    description: CACHED,
    tags,
    query: LoyaltyInsightsQuery,
    output: LoyaltyInsights,
  }),
  referralInsights: defineOperation({
    name: 'insights.referrals',
    method: 'get',
    path: '/insights/referrals',
    scope: 'insights:read',
    summary: 'Referral figures: conversions by status, rewards granted, top referrers',
    description: CACHED,
    tags,
    query: ReferralInsightsQuery,
    output: ReferralInsights,
  }),
  webhookInsights: defineOperation({
    name: 'insights.webhooks',
    method: 'get',
    path: '/insights/webhooks',
    scope: 'insights:read',
    summary: 'Webhook delivery health: deliveries by status, oldest pending, success rate of the last 24 h',
    description: CACHED,
    tags,
    output: WebhookInsights,
  }),
};
