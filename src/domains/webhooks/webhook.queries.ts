// SQL of webhook endpoints: parameterized, explicit columns, one row mapper; every statement is scoped to a workspace.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import { presentFields } from '../../platform/partial-update.js';
import type { UpdateWebhookBody, WebhookEndpoint, WebhookSubscription } from './webhook.schemas.js';

const COLUMNS =
  'id, url, description, event_types, active, secret_rotated_at, previous_secret_expires_at, created_at, updated_at';

interface EndpointRow {
  [column: string]: unknown;
  id: string;
  url: string;
  description: string | null;
  event_types: string[] | null;
  active: boolean;
  secret_rotated_at: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: (row.event_types ?? '*') as WebhookSubscription,
    description: row.description,
    active: row.active,
    secretRotatedAt: row.secret_rotated_at?.toISOString() ?? null,
    // An expired overlap is reported as over, whether or not the row still holds the old ciphertext.
    previousSecretExpiresAt:
      row.previous_secret_expires_at && row.previous_secret_expires_at > new Date() ? row.previous_secret_expires_at.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** `*` is stored as NULL; a list is stored without duplicates. */
function eventTypesColumn(events: WebhookSubscription): string[] | null {
  return events === '*' ? null : [...new Set(events)];
}

export interface NewEndpoint {
  id: string;
  url: string;
  events: WebhookSubscription;
  description: string | undefined;
  active: boolean | undefined;
  sealedSecret: Buffer;
}

export async function insertEndpoint(db: Sql, workspaceId: string, endpoint: NewEndpoint): Promise<WebhookEndpoint> {
  const { rows } = await db.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (workspace_id, id, url, description, event_types, active, secret_ciphertext)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [
      workspaceId,
      endpoint.id,
      endpoint.url,
      endpoint.description ?? null,
      eventTypesColumn(endpoint.events),
      endpoint.active ?? true,
      endpoint.sealedSecret,
    ],
  );
  return toEndpoint(rows[0]!);
}

/** `forUpdate` locks the row until the transaction ends: the endpoint as it is before this transaction changes it. */
export async function findEndpoint(
  db: Sql,
  workspaceId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<WebhookEndpoint | undefined> {
  const { rows } = await db.query<EndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2${options.forUpdate ? ' FOR NO KEY UPDATE' : ''}`,
    [workspaceId, id],
  );
  return rows[0] && toEndpoint(rows[0]);
}

export function listEndpoints(db: Sql, cursors: CursorCodec, workspaceId: string, request: PageRequest) {
  return keysetPage<EndpointRow, WebhookEndpoint>(
    db,
    cursors,
    { list: 'webhooks.list', from: 'webhook_endpoints', columns: COLUMNS, where: ['workspace_id = $1'], params: [workspaceId], map: toEndpoint },
    request,
  );
}

export async function updateEndpoint(
  db: Sql,
  workspaceId: string,
  id: string,
  patch: UpdateWebhookBody,
): Promise<WebhookEndpoint | undefined> {
  const { rows } = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints SET
       url = CASE WHEN 'url' = ANY($3) THEN $4::text ELSE url END,
       event_types = CASE WHEN 'events' = ANY($3) THEN $5::text[] ELSE event_types END,
       description = CASE WHEN 'description' = ANY($3) THEN $6::text ELSE description END,
       active = CASE WHEN 'active' = ANY($3) THEN $7::boolean ELSE active END,
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [
      workspaceId,
      id,
      presentFields(patch),
      patch.url ?? null,
      patch.events === undefined ? null : eventTypesColumn(patch.events),
      patch.description ?? null,
      patch.active ?? null,
    ],
  );
  return rows[0] && toEndpoint(rows[0]);
}

/** The endpoint as it was, or undefined when there is none. */
export async function deleteEndpoint(db: Sql, workspaceId: string, id: string): Promise<WebhookEndpoint | undefined> {
  const { rows } = await db.query<EndpointRow>(`DELETE FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [
    workspaceId,
    id,
  ]);
  return rows[0] && toEndpoint(rows[0]);
}

/** The current secret becomes the previous one for `overlapSeconds` (0 drops it at once). */
export async function replaceEndpointSecret(
  db: Sql,
  workspaceId: string,
  id: string,
  sealedSecret: Buffer,
  overlapSeconds: number,
): Promise<WebhookEndpoint | undefined> {
  const { rows } = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints SET
       previous_secret_ciphertext = CASE WHEN $4::int > 0 THEN secret_ciphertext END,
       previous_secret_expires_at = CASE WHEN $4::int > 0 THEN now() + make_interval(secs => $4::int) END,
       secret_ciphertext = $3,
       secret_rotated_at = now(),
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [workspaceId, id, sealedSecret, overlapSeconds],
  );
  return rows[0] && toEndpoint(rows[0]);
}
