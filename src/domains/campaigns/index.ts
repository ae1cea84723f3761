// The campaigns domain's public surface.
export { campaignContract } from './campaign.contract.js';
export { campaignHandlers } from './campaign.handlers.js';
export { findCampaign } from './campaign.queries.js';
export type { Campaign, CampaignType } from './campaign.schemas.js';
