// The worker's SQL: turn undispatched events and requested jobs into deliveries, load what an attempt needs, and
// record a batch of attempt outcomes. Each runs inside the caller's transaction with the matching pg-boss writes.
import type { Sql } from '../../../platform/database.js';
import type { AttemptResult } from './delivery-http.js';

export interface DeliveryJobRequest {
  deliveryId: string;
  trigger: 'scheduled' | 'replay';
  step: number;
}

/**
 * Marks up to `limit` committed, undispatched events as dispatched and creates one delivery per active endpoint of
 * their workspace that existed before the event was recorded and subscribes to its type. SKIP LOCKED lets several
 * workers dispatch side by side. Returns the new deliveries (their first attempt is step 0).
 */
export async function dispatchEvents(tx: Sql, limit: number): Promise<{ events: number; deliveryIds: string[] }> {
  const { rows } = await tx.query<{ events: number; delivery_ids: string[] }>(
    `WITH batch AS (
       SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED
     ), marked AS (
       UPDATE events e SET dispatched_at = now() FROM batch WHERE e.id = batch.id
       RETURNING e.id, e.workspace_id, e.type, e.created_at
     ), inserted AS (
       INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_type)
       SELECT m.workspace_id, ep.id, m.id, m.type
       FROM marked m JOIN webhook_endpoints ep
         -- Strictly after: an endpoint does not receive the webhook.created event of its own creation (same transaction).
         ON ep.workspace_id = m.workspace_id AND ep.active AND ep.created_at < m.created_at
        AND (ep.event_types IS NULL OR m.type = ANY (ep.event_types))
       ORDER BY m.created_at, m.id
       ON CONFLICT (endpoint_id, event_id) DO NOTHING
       RETURNING id
     )
     SELECT (SELECT count(*)::int FROM marked) AS events, ARRAY(SELECT id FROM inserted) AS delivery_ids`,
    [limit],
  );
  return { events: rows[0]!.events, deliveryIds: rows[0]!.delivery_ids };
}

/** Claims jobs the web service asked for (event replays, delivery replays) and clears the marks. */
export async function claimRequestedJobs(tx: Sql, limit: number): Promise<DeliveryJobRequest[]> {
  const { rows } = await tx.query<{ id: string; kind: 'scheduled' | 'replay'; step: number }>(
    `UPDATE webhook_deliveries d SET requested_job = NULL
     FROM (SELECT id, requested_job FROM webhook_deliveries WHERE requested_job IS NOT NULL
           ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED) r
     WHERE d.id = r.id
     RETURNING d.id, r.requested_job AS kind, d.step`,
    [limit],
  );
  return rows.map((r) => ({ deliveryId: r.id, trigger: r.kind, step: r.step }));
}

export interface AttemptContext {
  deliveryId: string;
  workspaceId: string;
  status: string;
  step: number;
  endpointId: string;
  url: string;
  active: boolean;
  sealedSecret: Buffer;
  /** Present while a rotation's overlap lasts. */
  sealedPreviousSecret: Buffer | null;
  eventId: string;
  eventType: string;
  payload: Record<string, unknown>;
  eventCreatedAt: Date;
}

export async function loadAttemptContexts(db: Sql, deliveryIds: readonly string[]): Promise<Map<string, AttemptContext>> {
  const { rows } = await db.query<{
    id: string;
    workspace_id: string;
    status: string;
    step: number;
    endpoint_id: string;
    url: string;
    active: boolean;
    secret_ciphertext: Buffer;
    previous_secret_ciphertext: Buffer | null;
    event_id: string;
    type: string;
    payload: Record<string, unknown>;
    created_at: Date;
  }>(
    `SELECT d.id, d.workspace_id, d.status, d.step, d.endpoint_id, ep.url, ep.active, ep.secret_ciphertext,
            CASE WHEN ep.previous_secret_expires_at > now() THEN ep.previous_secret_ciphertext END AS previous_secret_ciphertext,
            e.id AS event_id, e.type, e.payload, e.created_at
     FROM webhook_deliveries d
     JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
     JOIN events e ON e.id = d.event_id
     WHERE d.id = ANY ($1::uuid[])`,
    [deliveryIds],
  );
  return new Map(
    rows.map((r) => [
      r.id,
      {
        deliveryId: r.id,
        workspaceId: r.workspace_id,
        status: r.status,
        step: r.step,
        endpointId: r.endpoint_id,
        url: r.url,
        active: r.active,
        sealedSecret: r.secret_ciphertext,
        sealedPreviousSecret: r.previous_secret_ciphertext,
        eventId: r.event_id,
        eventType: r.type,
        payload: r.payload,
        eventCreatedAt: r.created_at,
      },
    ]),
  );
}

export interface AttemptRecord extends AttemptResult {
  deliveryId: string;
  trigger: 'scheduled' | 'replay';
  /** The schedule step this attempt ran for (scheduled attempts). */
  step: number;
  /** For a failed scheduled attempt: when the next one runs, or null when this was the last step (dead). */
  nextRetryAt: Date | null;
}

export interface RecordedAttempt {
  deliveryId: string;
  status: string;
  step: number;
  nextRetryAt: Date | null;
  trigger: 'scheduled' | 'replay';
}

/**
 * Records attempts (one per delivery per call) and moves each delivery on. A scheduled attempt only counts while its
 * delivery still waits for that step: a stale job (re-run after a crash, or overtaken by a replay's success) records
 * nothing. A replay can only make a delivery delivered; it never schedules nor kills.
 */
export async function recordAttempts(tx: Sql, records: readonly AttemptRecord[]): Promise<RecordedAttempt[]> {
  if (records.length === 0) return [];
  const column = <T>(pick: (r: AttemptRecord) => T) => records.map(pick);
  const { rows } = await tx.query<{ id: string; status: string; step: number; next_retry_at: Date | null; trigger: 'scheduled' | 'replay' }>(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::bool[], $5::int[], $6::text[], $7::text[], $8::int[],
                            $9::timestamptz[], $10::timestamptz[])
         AS i(delivery_id, trigger, step, succeeded, response_status, response_body, error, duration_ms, started_at, next_retry_at)
     ), moved AS (
       UPDATE webhook_deliveries d SET
         attempts = d.attempts + 1,
         status = CASE
           WHEN i.succeeded THEN 'delivered'
           WHEN i.trigger = 'replay' THEN d.status
           WHEN i.next_retry_at IS NULL THEN 'dead'
           ELSE 'retry_scheduled' END,
         next_retry_at = CASE
           WHEN i.succeeded THEN NULL
           WHEN i.trigger = 'replay' THEN d.next_retry_at
           ELSE i.next_retry_at END,
         step = CASE WHEN i.trigger = 'scheduled' THEN i.step + 1 ELSE d.step END,
         last_attempt_at = i.started_at,
         response_status = i.response_status,
         response_body = i.response_body,
         error = i.error,
         updated_at = now()
       FROM input i
       WHERE d.id = i.delivery_id
         AND (i.trigger = 'replay' OR (d.step = i.step AND d.status IN ('pending', 'retry_scheduled')))
       RETURNING d.id, d.workspace_id, d.attempts, d.status, d.step AS new_step, d.next_retry_at AS new_next_retry_at,
         i.trigger, i.succeeded, i.response_status, i.response_body, i.error, i.duration_ms, i.started_at
     ), attempts AS (
       INSERT INTO webhook_delivery_attempts
         (workspace_id, delivery_id, number, trigger, succeeded, response_status, response_body, error, duration_ms, created_at)
       SELECT workspace_id, id, attempts, trigger, succeeded, response_status, response_body, error, duration_ms, started_at FROM moved
     )
     SELECT id, status, new_step AS step, new_next_retry_at AS next_retry_at, trigger FROM moved`,
    [
      column((r) => r.deliveryId),
      column((r) => r.trigger),
      column((r) => r.step),
      column((r) => r.succeeded),
      column((r) => r.responseStatus),
      column((r) => r.responseBody),
      column((r) => r.error),
      column((r) => r.durationMs),
      column((r) => r.startedAt),
      column((r) => r.nextRetryAt),
    ],
  );
  return rows.map((r) => ({ deliveryId: r.id, status: r.status, step: r.step, nextRetryAt: r.next_retry_at, trigger: r.trigger }));
}

/** Deliveries whose endpoint was deactivated end as dead without an attempt. */
export async function markDeliveriesDead(tx: Sql, deliveryIds: readonly string[], error: string): Promise<void> {
  if (deliveryIds.length === 0) return;
  await tx.query(
    `UPDATE webhook_deliveries SET status = 'dead', next_retry_at = NULL, error = $2, updated_at = now()
     WHERE id = ANY ($1::uuid[]) AND status IN ('pending', 'retry_scheduled')`,
    [deliveryIds, error],
  );
}
