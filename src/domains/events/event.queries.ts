// The outbox inserts, always called inside the transaction of the change they report.
import type { Sql } from '../../platform/database.js';
import { uuidv7 } from '../../platform/ids.js';
import type { EventType } from '../../contract/event.schemas.js';

export interface NewEvent {
  workspaceId: string;
  type: EventType;
  payload: Record<string, unknown>;
}

export async function recordEvent(tx: Sql, workspaceId: string, type: EventType, payload: Record<string, unknown>): Promise<string> {
  const [id] = await recordEvents(tx, [{ workspaceId, type, payload }]);
  return id!;
}

/** Events not yet turned into deliveries, and the age of the oldest (0 when none): the outbox's backlog. */
export async function readOutboxBacklog(db: Sql): Promise<{ events: number; oldestAgeSeconds: number }> {
  const { rows } = await db.query<{ events: number; oldest_age_seconds: number }>(
    `SELECT count(*)::int AS events, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest_age_seconds
     FROM events WHERE dispatched_at IS NULL`,
  );
  return { events: rows[0]!.events, oldestAgeSeconds: rows[0]!.oldest_age_seconds };
}

/**
 * The outbox insert as a part of a statement that also writes the change it reports (one round trip, one transaction):
 * `rows` selects (id, workspace_id, type, payload), time-ordered ids (uuidv7) given by the caller.
 */
export function outboxInsertOf(rows: string): string {
  return `INSERT INTO events (id, workspace_id, type, payload) ${rows}`;
}

/** Many events in one statement (the engine's group commit records a whole batch at once). Ids in input order. */
export async function recordEvents(tx: Sql, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  // Time-ordered ids, as the engine's events have: rows written together share the b-tree's right edge.
  const ids = events.map(() => uuidv7());
  await tx.query(
    `INSERT INTO events (id, workspace_id, type, payload)
     SELECT i, w, t, p FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[]) WITH ORDINALITY AS e(i, w, t, p, n) ORDER BY n`,
    [ids, events.map((e) => e.workspaceId), events.map((e) => e.type), events.map((e) => JSON.stringify(e.payload))],
  );
  return ids;
}
