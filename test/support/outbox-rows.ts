// Outbox rows written straight into the tables, at chosen ages and states: events, webhook endpoints, deliveries as
// the worker leaves them, and their attempts (the dispatcher and the delivery worker are tested in test/webhooks).
import { randomUUID } from 'node:crypto';
import type { Sql } from '../../src/platform/database.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'retry_scheduled' | 'dead';

export async function seedEndpoint(db: Sql, workspaceId: string): Promise<string> {
  const id = randomUUID();
  await db.query(`INSERT INTO webhook_endpoints (workspace_id, id, url, secret_ciphertext) VALUES ($1, $2, 'https://hooks.example/x', '\\x00')`, [workspaceId, id]);
  return id;
}

/** An event `ageMs` old; dispatched when it was recorded unless `dispatched: false` (the outbox has not taken it yet). */
export async function seedEvent(db: Sql, workspaceId: string, ageMs: number, options: { dispatched?: boolean } = {}): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO events (workspace_id, id, type, payload, created_at, dispatched_at)
     VALUES ($1, $2, 'customer.created', '{}', now() - $3::float8 * interval '1 millisecond',
             CASE WHEN $4 THEN now() - $3::float8 * interval '1 millisecond' END)`,
    [workspaceId, id, ageMs, options.dispatched ?? true],
  );
  return id;
}

/** Many dispatched events of one age in one statement; their ids. */
export async function seedEvents(db: Sql, workspaceId: string, count: number, ageMs: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO events (workspace_id, type, payload, created_at, dispatched_at)
     SELECT $1, 'customer.created', '{}', t, t
     FROM generate_series(1, $2) AS n, LATERAL (SELECT now() - $3::float8 * interval '1 millisecond' - n * interval '1 second' AS t) a
     RETURNING id`,
    [workspaceId, count, ageMs],
  );
  return rows.map((r) => r.id);
}

/** A delivery of the event to the endpoint, in `status`, with one attempt unless it is still pending. */
export async function seedDelivery(
  db: Sql,
  workspaceId: string,
  endpointId: string,
  eventId: string,
  status: DeliveryStatus,
  options: { requestedJob?: 'scheduled' | 'replay' } = {},
): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO webhook_deliveries (workspace_id, id, endpoint_id, event_id, event_type, status, requested_job, created_at)
     SELECT $1, $2, $3, e.id, e.type, $5, $6, e.created_at FROM events e WHERE e.id = $4`,
    [workspaceId, id, endpointId, eventId, status, options.requestedJob ?? null],
  );
  if (status !== 'pending') {
    await db.query(
      `INSERT INTO webhook_delivery_attempts (workspace_id, delivery_id, number, trigger, succeeded, duration_ms, created_at)
       VALUES ($1, $2, 1, 'scheduled', $3, 10, now())`,
      [workspaceId, id, status === 'delivered'],
    );
  }
  return id;
}
