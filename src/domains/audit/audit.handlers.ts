// Audit log handlers.
import { implement } from '../../contract/handler.js';
import { auditContract } from './audit.contract.js';
import { listAuditEntries } from './audit-entry.queries.js';

export const auditHandlers = implement(auditContract, {
  async listAuditEntries({ input, actor, deps }) {
    return listAuditEntries(deps.db, deps.cursors, actor.workspaceId, input);
  },
});
