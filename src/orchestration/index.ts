// Orchestration above the domains it spans: custom events (loyalty earning, referral conversion) and the worker's
// referral reactions (conversions confirmed by orders, rewards granted from the catalog). No domain imports it.
export { customEventContract } from './custom-event.contract.js';
export { customEventHandlers } from './custom-event.handlers.js';
export { reactToNextReferralEvent, startReferralJobs } from './referral-reactions.jobs.js';
export { orderReturnContract } from './order-return.contract.js';
export { orderReturnHandlers, orderUpdateHandlers } from './order-return.handlers.js';
