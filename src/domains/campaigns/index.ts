// The campaigns domain's public surface.
export { campaignContract } from './campaign.contract.js';
export { campaignHandlers } from './campaign.handlers.js';
export { findCampaign } from './campaign.queries.js';
export type { Campaign, CampaignType } from './campaign.schemas.js';
export type { BudgetPeriods, PeriodUse } from './campaign-budget.rules.js';
export { LoyaltySettings, LoyaltyExpiration } from './loyalty-settings.schemas.js';
export { ReferralSettings } from './referral-settings.schemas.js';
