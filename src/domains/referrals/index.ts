// The referrals domain's public surface.
export { referralContract } from './referral.contract.js';
export { referralHandlers } from './referral.handlers.js';
export { reactToNextReferralEvent, startReferralJobs } from './referral.jobs.js';
export { convertByEvent, type EventConversion } from './event-conversion.js';
