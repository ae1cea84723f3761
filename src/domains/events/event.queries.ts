// The outbox insert, always called inside the transaction of the change it reports.
import type { Sql } from '../../platform/database.js';
import type { EventType } from './event.schemas.js';

export async function recordEvent(tx: Sql, workspaceId: string, type: EventType, payload: Record<string, unknown>): Promise<string> {
  const { rows } = await tx.query<{ id: string }>(
    'INSERT INTO events (workspace_id, type, payload) VALUES ($1, $2, $3) RETURNING id',
    [workspaceId, type, payload],
  );
  return rows[0]!.id;
}
