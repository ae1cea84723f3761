// The promotions domain's public surface: automatic tiers, their redemption, and qualification.
export { qualificationIndexes } from './qualification.service.js';
export { promotionContract } from './promotion.contract.js';
export { promotionHandlers } from './promotion.handlers.js';
