// The redemptions domain's public surface.
export { redemptionContract } from './redemption.contract.js';
export { redemptionHandlers } from './redemption.handlers.js';
export { IDEMPOTENCY_KEY_RETENTION_MS, pruneExpiredIdempotencyKeys, startIdempotencyKeyPruning } from './idempotency-key.jobs.js';
export { checkoutCustomers, previewCustomer, workspaceStackLimits } from './redemption.service.js';
