// Audit entries written straight into the table, for tests that need them at chosen times, by chosen actors.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../../src/platform/database.js';

/** An audit entry as the tests read it from the table. */
export interface AuditEntryRow {
  operation: string;
  resource_type: string;
  resource_id: string | null;
  changes: { before?: any; after?: any } | null;
  actor_type: string;
  actor_id: string;
}

export interface AuditEntrySeed {
  operation?: string;
  resourceType?: string;
  resourceId?: string | null;
  actor?: { type: 'api_key' | 'staff_user' | 'system'; id: string; label: string };
  changes?: { before?: unknown; after?: unknown } | null;
  requestId?: string;
  ip?: string | null;
  userAgent?: string | null;
  /** Default: the database's clock (as a real entry gets). */
  createdAt?: Date;
}

/** Inserts one entry; returns its id. */
export async function seedAuditEntry(db: Sql, workspaceId: string, seed: AuditEntrySeed = {}): Promise<string> {
  const actor = seed.actor ?? { type: 'api_key', id: randomUUID(), label: 'test key' };
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO audit_entries (workspace_id, actor_type, actor_id, actor_label, operation, resource_type, resource_id, changes,
                                request_id, ip, user_agent, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, COALESCE($12::timestamptz, clock_timestamp()))
     RETURNING id`,
    [
      workspaceId,
      actor.type,
      actor.id,
      actor.label,
      seed.operation ?? 'campaigns.create',
      seed.resourceType ?? 'campaign',
      seed.resourceId === undefined ? randomUUID() : seed.resourceId,
      seed.changes ? JSON.stringify(seed.changes) : null,
      seed.requestId ?? `req-${randomUUID()}`,
      seed.ip ?? null,
      seed.userAgent ?? null,
      seed.createdAt ?? null,
    ],
  );
  return rows[0]!.id;
}

/** `count` entries one second apart, the last at `newest`; returned oldest first. */
export async function seedAuditEntries(db: Sql, workspaceId: string, count: number, newest = new Date(), seed: AuditEntrySeed = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = count - 1; i >= 0; i--) {
    ids.push(await seedAuditEntry(db, workspaceId, { ...seed, createdAt: new Date(newest.getTime() - i * 1000) }));
  }
  return ids;
}
