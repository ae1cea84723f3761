// The promotions domain's public surface: automatic tiers, their redemption, and qualification.
export { promotionContract } from './promotion.contract.js';
export { promotionHandlers } from './promotion.handlers.js';
