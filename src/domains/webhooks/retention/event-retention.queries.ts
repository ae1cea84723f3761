// SQL of the event retention: one bounded batch of expired events deleted with their webhook deliveries (and, by
// cascade, the deliveries' attempts).
import type { Sql } from '../../../platform/database.js';

export interface PrunedEvents {
  events: number;
  deliveries: number;
}

/**
 * Deletes at most `limit` events older than `retentionMs`, with their deliveries. Never an event the outbox still owes:
 * one not yet dispatched (its deliveries do not exist yet), or one with a delivery pending, scheduled for a retry or
 * holding a requested replay. Each workspace's events are read oldest first through events_by_created (no index on
 * age alone weighs on the hot path's inserts); rows locked elsewhere (a dispatch, a second worker) are skipped. A
 * replay asked for in the very instant of the prune, on an event already past retention, may go with it.
 */
export async function pruneEventBatch(db: Sql, retentionMs: number, limit: number): Promise<PrunedEvents> {
  const { rows } = await db.query<{ events: number; deliveries: number }>(
    `WITH expired AS (
       SELECT e.id FROM workspaces w CROSS JOIN LATERAL (
         SELECT ev.id FROM events ev
         WHERE ev.workspace_id = w.workspace_id
           AND ev.created_at < now() - $1::float8 * interval '1 millisecond'
           AND ev.dispatched_at IS NOT NULL
           AND NOT EXISTS (
             SELECT 1 FROM webhook_deliveries d
             WHERE d.event_id = ev.id AND (d.status IN ('pending', 'retry_scheduled') OR d.requested_job IS NOT NULL))
         ORDER BY ev.created_at LIMIT $2
       ) e
       LIMIT $2
     ), locked AS (
       SELECT id FROM events WHERE id IN (SELECT id FROM expired) FOR UPDATE SKIP LOCKED
     ), deliveries AS (
       DELETE FROM webhook_deliveries d USING locked WHERE d.event_id = locked.id RETURNING d.id
     ), pruned AS (
       DELETE FROM events e USING locked WHERE e.id = locked.id RETURNING e.id
     )
     SELECT (SELECT count(*) FROM pruned)::int AS events, (SELECT count(*) FROM deliveries)::int AS deliveries`,
    [retentionMs, limit],
  );
  return { events: rows[0]!.events, deliveries: rows[0]!.deliveries };
}
