// SQL the API needs about deliveries: reads, attempts, and replay requests (which the worker's dispatcher enqueues).
import type { CursorCodec } from '../../../platform/cursor.js';
import type { Sql } from '../../../platform/database.js';
import { keysetPage, type PageRequest } from '../../../platform/pagination.js';
import type { DeliveryStatus, ListDeliveriesQuery, WebhookAttempt, WebhookDelivery } from '../webhook.schemas.js';

const COLUMNS =
  'id, endpoint_id, event_id, event_type, status, attempts, response_status, response_body, error, next_retry_at, last_attempt_at, created_at, updated_at';

interface DeliveryRow {
  [column: string]: unknown;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  next_retry_at: Date | null;
  last_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    webhookId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    error: row.error,
    nextRetryAt: row.next_retry_at?.toISOString() ?? null,
    lastAttemptAt: row.last_attempt_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const ATTEMPT_COLUMNS = 'id, delivery_id, number, trigger, succeeded, response_status, response_body, error, duration_ms, created_at';

interface AttemptRow {
  [column: string]: unknown;
  id: string;
  delivery_id: string;
  number: number;
  trigger: 'scheduled' | 'replay';
  succeeded: boolean;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  created_at: Date;
}

function toAttempt(row: AttemptRow): WebhookAttempt {
  return {
    id: row.id,
    deliveryId: row.delivery_id,
    number: row.number,
    trigger: row.trigger,
    succeeded: row.succeeded,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    error: row.error,
    durationMs: row.duration_ms,
    createdAt: row.created_at.toISOString(),
  };
}

export function listDeliveries(db: Sql, cursors: CursorCodec, workspaceId: string, endpointId: string, request: ListDeliveriesQuery) {
  const where = ['workspace_id = $1', 'endpoint_id = $2'];
  const params: unknown[] = [workspaceId, endpointId];
  if (request.status !== undefined) {
    params.push(request.status);
    where.push(`status = $${params.length}`);
  }
  if (request.eventId !== undefined) {
    params.push(request.eventId);
    where.push(`event_id = $${params.length}`);
  }
  return keysetPage<DeliveryRow, WebhookDelivery>(
    db,
    cursors,
    { list: `webhooks.listDeliveries:${endpointId}`, from: 'webhook_deliveries', columns: COLUMNS, where, params, map: toDelivery },
    request,
  );
}

export async function recentDeliveries(db: Sql, workspaceId: string, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE workspace_id = $1 AND endpoint_id = $2
     ORDER BY created_at DESC, id DESC LIMIT $3`,
    [workspaceId, endpointId, limit],
  );
  return rows.map(toDelivery);
}

export async function findDelivery(db: Sql, workspaceId: string, endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE workspace_id = $1 AND endpoint_id = $2 AND id = $3`,
    [workspaceId, endpointId, id],
  );
  return rows[0] && toDelivery(rows[0]);
}

export function listAttempts(db: Sql, cursors: CursorCodec, workspaceId: string, deliveryId: string, request: PageRequest) {
  return keysetPage<AttemptRow, WebhookAttempt>(
    db,
    cursors,
    {
      list: `webhooks.listAttempts:${deliveryId}`,
      from: 'webhook_delivery_attempts',
      columns: ATTEMPT_COLUMNS,
      where: ['workspace_id = $1', 'delivery_id = $2'],
      params: [workspaceId, deliveryId],
      map: toAttempt,
    },
    request,
  );
}

/** Asks the worker for one more attempt of this delivery; replays requested before it runs coalesce into one. */
export async function requestReplay(db: Sql, workspaceId: string, endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
  const { rows } = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries SET requested_job = COALESCE(requested_job, 'replay'), updated_at = now()
     WHERE workspace_id = $1 AND endpoint_id = $2 AND id = $3 RETURNING ${COLUMNS}`,
    [workspaceId, endpointId, id],
  );
  return rows[0] && toDelivery(rows[0]);
}

/**
 * Delivers an event to one endpoint: a replay attempt of the existing delivery, or a new delivery (with the
 * retry schedule) when the endpoint never had one for it. Undefined when the event is not in the workspace.
 */
export async function requestEventDelivery(
  db: Sql,
  workspaceId: string,
  endpointId: string,
  eventId: string,
): Promise<WebhookDelivery | undefined> {
  const { rows } = await db.query<DeliveryRow>(
    `INSERT INTO webhook_deliveries AS d (workspace_id, endpoint_id, event_id, event_type, requested_job)
     SELECT e.workspace_id, $2, e.id, e.type, 'scheduled' FROM events e WHERE e.workspace_id = $1 AND e.id = $3
     ON CONFLICT (endpoint_id, event_id)
       DO UPDATE SET requested_job = COALESCE(d.requested_job, 'replay'), updated_at = now()
     RETURNING ${COLUMNS}`,
    [workspaceId, endpointId, eventId],
  );
  return rows[0] && toDelivery(rows[0]);
}
