// The redemptions domain's public surface.
export { redemptionContract } from './redemption.contract.js';
export { redemptionHandlers } from './redemption.handlers.js';
export { IDEMPOTENCY_KEY_RETENTION_MS, pruneExpiredIdempotencyKeys, startIdempotencyKeyPruning } from './idempotency-key.jobs.js';
export { refusal, refusalFields } from '../../checkout/redemption.rules.js';
export { checkoutCustomers, previewCustomer, workspaceStackLimit } from './redemption.service.js';
