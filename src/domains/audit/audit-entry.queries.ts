// The audit log's SQL: entries inserted inside the transaction of the change they record, and the reads.
import type { AuditTrail, RecordedChange } from '../../contract/handler.js';
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage } from '../../platform/pagination.js';
import type { AuditEntry, ListAuditEntriesQuery } from './audit-entry.schemas.js';

export interface NewAuditEntry {
  trail: AuditTrail;
  change: RecordedChange;
}

function changesOf(change: RecordedChange): string | null {
  const changes: Record<string, unknown> = {};
  if (change.before !== undefined) changes.before = change.before;
  if (change.after !== undefined) changes.after = change.after;
  return Object.keys(changes).length ? JSON.stringify(changes) : null;
}

/** Many entries in one statement (an engine batch writes all of its own at once). `change` must be redacted already. */
export async function insertAuditEntries(tx: Sql, entries: readonly NewAuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const column = <T>(pick: (e: NewAuditEntry) => T) => entries.map(pick);
  await tx.query(
    `INSERT INTO audit_entries (workspace_id, actor_type, actor_id, actor_label, operation, resource_type, resource_id, changes, request_id, ip, user_agent)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[], $9::text[], $10::text[], $11::text[])`,
    [
      column((e) => e.trail.workspaceId),
      column((e) => e.trail.actor.type),
      column((e) => e.trail.actor.id),
      column((e) => e.trail.actor.label),
      column((e) => e.trail.operation),
      column((e) => e.change.resourceType),
      column((e) => e.change.resourceId ?? null),
      column((e) => changesOf(e.change)),
      column((e) => e.trail.requestId),
      column((e) => e.trail.ip ?? null),
      column((e) => e.trail.userAgent ?? null),
    ],
  );
}

const COLUMNS = 'id, created_at, actor_type, actor_id, actor_label, operation, resource_type, resource_id, changes, request_id, ip, user_agent';

interface AuditEntryRow {
  [column: string]: unknown;
  id: string;
  created_at: Date;
  actor_type: AuditEntry['actor']['type'];
  actor_id: string;
  actor_label: string;
  operation: string;
  resource_type: string;
  resource_id: string | null;
  changes: AuditEntry['changes'] | null;
  request_id: string;
  ip: string | null;
  user_agent: string | null;
}

function toAuditEntry(row: AuditEntryRow): AuditEntry {
  return {
    id: row.id,
    createdAt: row.created_at.toISOString(),
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    operation: row.operation,
    resourceType: row.resource_type,
    ...(row.resource_id !== null ? { resourceId: row.resource_id } : {}),
    ...(row.changes !== null ? { changes: row.changes } : {}),
    requestId: row.request_id,
    ...(row.ip !== null ? { ip: row.ip } : {}),
    ...(row.user_agent !== null ? { userAgent: row.user_agent } : {}),
  };
}

const EQUALITY_FILTERS = [
  ['operation', 'operation'],
  ['resourceType', 'resource_type'],
  ['resourceId', 'resource_id'],
  ['actorType', 'actor_type'],
  ['actorId', 'actor_id'],
] as const;

export function listAuditEntries(db: Sql, cursors: CursorCodec, workspaceId: string, request: ListAuditEntriesQuery) {
  const where = ['workspace_id = $1'];
  const params: unknown[] = [workspaceId];
  const filter = (condition: (param: string) => string, value: unknown) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  for (const [field, column] of EQUALITY_FILTERS) {
    if (request[field] !== undefined) filter((p) => `${column} = ${p}`, request[field]);
  }
  if (request.from !== undefined) filter((p) => `created_at >= ${p}::timestamptz`, request.from);
  if (request.to !== undefined) filter((p) => `created_at < ${p}::timestamptz`, request.to);
  return keysetPage<AuditEntryRow, AuditEntry>(
    db,
    cursors,
    { list: 'audit.list', from: 'audit_entries', columns: COLUMNS, where, params, map: toAuditEntry },
    request,
  );
}

/**
 * Deletes at most `limit` entries older than `retentionDays`, oldest first; returns how many went. Entries locked by
 * a concurrent prune are skipped, so two workers never wait on each other.
 */
export async function pruneAuditEntries(db: Sql, retentionDays: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM audit_entries WHERE id IN (
       SELECT id FROM audit_entries WHERE created_at < now() - make_interval(days => $1::int)
       ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [retentionDays, limit],
  );
  return rowCount ?? 0;
}
