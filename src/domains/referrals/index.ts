// The referrals domain's public surface.
export { referralContract } from './referral.contract.js';
export { referralHandlers } from './referral.handlers.js';
// For the referral reactions (orchestration/): conversions confirmed, reverted and their reward outcomes.
export {
  claimOutcome,
  confirmOrderConversions,
  grantedOutcomes,
  lockConversionForRewards,
  revertOrderConversions,
  settleOutcome,
  takeReferralEvent,
  type ConversionChange,
  type ReferralInboxEvent,
} from './conversion.queries.js';
export { publicIssued } from './referral.queries.js';
export { convertByEvent, type EventConversion } from './event-conversion.js';
