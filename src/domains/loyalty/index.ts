// The loyalty domain's public surface: its contract and handlers, the worker's jobs, and the ledger calls the engine
// and rewards use to spend and give back points (the same SQL functions every points change goes through).
export { loyaltyContract } from './loyalty.contract.js';
export { loyaltyHandlers } from './loyalty.handlers.js';
export { reactToNextEvent, startLoyaltyJobs, sweepPoints, type LoyaltyJobs, type LoyaltyJobSettings } from './loyalty.jobs.js';
export { debitPoints, refundPoints, grantPoints } from './points-ledger.queries.js';
export { Member as LoyaltyMember, LedgerEntry as LoyaltyLedgerEntry } from './member.schemas.js';
// For the rewards catalog: members' cards locked in id order, joining, members.
export { lockCards } from './points-ledger.queries.js';
export { joinProgram, placeMember } from './member.service.js';
export { findMember, findMemberId } from './member.queries.js';
// For custom events (orchestration/): the event row and the CUSTOM_EVENT rules' earnings, in the caller's unit of work.
export { earnForCustomEvent } from './earning.service.js';
export { insertCustomEvent } from './reaction.queries.js';
export { CustomEventBody, CustomEventOutcome } from './earning-rule.schemas.js';
// For order returns (orchestration/): the order's earnings recomputed on what remains paid.
export { hasOrderEarnings, reduceOrderEarnings, type PaidRemaining } from './return-earning.service.js';
