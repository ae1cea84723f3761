// The redemptions domain's public surface.
export { redemptionContract } from './redemption.contract.js';
export { redemptionHandlers } from './redemption.handlers.js';
