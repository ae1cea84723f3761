// The rewards domain's public surface: its operations, and what referral programs use to grant and take back rewards.
export { rewardContract } from './reward.contract.js';
export { rewardHandlers } from './reward.handlers.js';
export { grantReward, revokeGrant, type Grant } from './reward-grants.js';
export type { IssuedRecord } from './reward.queries.js';
