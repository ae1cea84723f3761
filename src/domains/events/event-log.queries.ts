// Reads of the event log, scoped to a workspace.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage } from '../../platform/pagination.js';
import type { Event, ListEventsQuery } from './event-log.schemas.js';
import type { EventType } from '../../contract/event.schemas.js';

const COLUMNS = 'id, type, payload, created_at';

interface EventRow {
  [column: string]: unknown;
  id: string;
  type: EventType;
  payload: Record<string, unknown>;
  created_at: Date;
}

function toEvent(row: EventRow): Event {
  return { id: row.id, type: row.type, payload: row.payload, createdAt: row.created_at.toISOString() };
}

export async function findEvent(db: Sql, workspaceId: string, id: string): Promise<Event | undefined> {
  const { rows } = await db.query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0] && toEvent(rows[0]);
}

export function listEvents(db: Sql, cursors: CursorCodec, workspaceId: string, request: ListEventsQuery) {
  const where = ['workspace_id = $1'];
  const params: unknown[] = [workspaceId];
  if (request.type !== undefined) {
    params.push(request.type);
    where.push(`type = $${params.length}`);
  }
  return keysetPage<EventRow, Event>(db, cursors, { list: 'events.list', from: 'events', columns: COLUMNS, where, params, map: toEvent }, request);
}
