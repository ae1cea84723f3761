// The audit domain's public surface: the unit of work every mutation writes through, the batch insert the engine
// uses, the audit log API, and the retention job the worker runs.
export { createMutations, redactChange, type Mutations } from './unit-of-work.js';
export { insertAuditEntries, type NewAuditEntry } from './audit-entry.queries.js';
export { auditContract } from './audit.contract.js';
export { auditHandlers } from './audit.handlers.js';
export { AuditEntry } from './audit-entry.schemas.js';
export { AUDIT_RETENTION_QUEUE, pruneExpiredAuditEntries, startAuditRetention } from './audit-retention.jobs.js';
