// Audit log operations: read only; no route changes or deletes an entry (only the retention job deletes, by age).
import { listEnvelope } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { AuditEntry, ListAuditEntriesQuery } from './audit-entry.schemas.js';

export const auditContract = {
  listAuditEntries: defineOperation({
    name: 'audit.list',
    method: 'get',
    path: '/audit-log',
    scope: 'audit:read',
    summary: 'List audit entries, newest first; filter by operation, resource, actor and time',
    description: 'One entry per successful mutation, written in the transaction of the change. `from` is inclusive, `to` exclusive.',
    tags: ['Audit log'],
    query: ListAuditEntriesQuery,
    output: listEnvelope(AuditEntry, 'AuditEntryList'),
  }),
};
