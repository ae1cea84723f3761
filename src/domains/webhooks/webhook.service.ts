// Webhook use cases: endpoints with a target check and a sealed secret shown once, secret rotation with an overlap,
// and replays, which the API only requests (the worker's dispatcher enqueues the attempt). Each change runs in the
// unit of work of its operation; the entries and events name the endpoint, never its secret (not even sealed).
import { randomUUID } from 'node:crypto';
import type { UnitOfWork } from '../../contract/handler.js';
import { invalidField, problem } from '../../contract/problems.js';
import { sqlState, type Sql } from '../../platform/database.js';
import { recentDeliveries, requestEventDelivery, requestReplay } from './delivery/delivery.queries.js';
import { deleteEndpoint, findEndpoint, insertEndpoint, replaceEndpointSecret, updateEndpoint } from './webhook.queries.js';
import type { CreateWebhookBody, UpdateWebhookBody, WebhookDelivery, WebhookEndpoint } from './webhook.schemas.js';
import { generateWebhookSecret, sealSecret } from './webhook-secret.js';
import type { WebhookSettings } from '../../contract/service-settings.js';
import { refuseTarget } from './webhook-target.js';

const RECENT_DELIVERIES = 20;
const FOREIGN_KEY_VIOLATION = '23503';
const ENDPOINT = 'webhook';
const DELIVERY = 'webhook_delivery';

const notFound = () => problem('not_found', 'no such webhook');

/** Resolves the URL's host: call it before the unit of work, so no transaction waits on DNS. */
export async function assertTargetAllowed(settings: WebhookSettings, url: string): Promise<void> {
  const reason = await refuseTarget(url, settings.allowPrivateTargets);
  if (reason) throw invalidField('url', `the webhook URL ${reason}`);
}

const subscription = (endpoint: WebhookEndpoint) => ({ webhookId: endpoint.id, url: endpoint.url, events: endpoint.events });

/** The target must have passed assertTargetAllowed. */
export async function createWebhook(
  { tx, record, emit }: UnitOfWork,
  settings: WebhookSettings,
  workspaceId: string,
  body: CreateWebhookBody,
): Promise<WebhookEndpoint & { secret: string }> {
  const id = randomUUID();
  const secret = generateWebhookSecret();
  const endpoint = await insertEndpoint(tx, workspaceId, {
    id,
    url: body.url,
    events: body.events,
    description: body.description,
    active: body.active,
    sealedSecret: sealSecret(settings.secretsKey, id, secret),
  });
  record({ resourceType: ENDPOINT, resourceId: endpoint.id, after: endpoint });
  emit('webhook.created', subscription(endpoint));
  return { ...endpoint, secret };
}

export async function getWebhook(db: Sql, workspaceId: string, id: string) {
  const endpoint = await findEndpoint(db, workspaceId, id);
  if (!endpoint) throw notFound();
  return { ...endpoint, deliveries: await recentDeliveries(db, workspaceId, id, RECENT_DELIVERIES) };
}

/** A new URL must have passed assertTargetAllowed. */
export async function changeWebhook({ tx, record, emit }: UnitOfWork, workspaceId: string, id: string, patch: UpdateWebhookBody): Promise<WebhookEndpoint> {
  const before = await findEndpoint(tx, workspaceId, id, { forUpdate: true });
  if (!before) throw notFound();
  const endpoint = await updateEndpoint(tx, workspaceId, id, patch);
  if (!endpoint) throw notFound();
  record({ resourceType: ENDPOINT, resourceId: id, before, after: endpoint });
  emit('webhook.updated', subscription(endpoint));
  return endpoint;
}

export async function removeWebhook({ tx, record, emit }: UnitOfWork, workspaceId: string, id: string): Promise<void> {
  const before = await deleteEndpoint(tx, workspaceId, id);
  if (!before) throw notFound();
  record({ resourceType: ENDPOINT, resourceId: id, before });
  emit('webhook.deleted', { webhookId: id });
}

export async function rotateWebhookSecret(
  { tx, record, emit }: UnitOfWork,
  settings: WebhookSettings,
  workspaceId: string,
  id: string,
  overlapSeconds: number,
): Promise<WebhookEndpoint & { secret: string }> {
  const before = await findEndpoint(tx, workspaceId, id, { forUpdate: true });
  if (!before) throw notFound();
  const secret = generateWebhookSecret();
  const endpoint = await replaceEndpointSecret(tx, workspaceId, id, sealSecret(settings.secretsKey, id, secret), overlapSeconds);
  if (!endpoint) throw notFound();
  // The entry shows when the secret changed and how long the previous one signs; the secrets stay out of it.
  record({ resourceType: ENDPOINT, resourceId: id, before, after: endpoint });
  emit('webhook.secret_rotated', { webhookId: id });
  return { ...endpoint, secret };
}

async function activeEndpoint(db: Sql, workspaceId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await findEndpoint(db, workspaceId, id);
  if (!endpoint) throw notFound();
  if (!endpoint.active) throw problem('conflict', 'the webhook is inactive; activate it before replaying');
  return endpoint;
}

export async function replayDelivery({ tx, record }: UnitOfWork, workspaceId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  await activeEndpoint(tx, workspaceId, endpointId);
  const delivery = await requestReplay(tx, workspaceId, endpointId, deliveryId);
  if (!delivery) throw problem('not_found', 'no such delivery');
  record({ resourceType: DELIVERY, resourceId: delivery.id, after: delivery });
  return delivery;
}

export async function replayEvent({ tx, record }: UnitOfWork, workspaceId: string, endpointId: string, eventId: string): Promise<WebhookDelivery> {
  await activeEndpoint(tx, workspaceId, endpointId);
  const delivery = await requestEventDelivery(tx, workspaceId, endpointId, eventId).catch((error: unknown) => {
    // The endpoint was deleted between the check and the insert.
    if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw notFound();
    throw error;
  });
  if (!delivery) throw problem('not_found', 'no such event');
  record({ resourceType: DELIVERY, resourceId: delivery.id, after: delivery });
  return delivery;
}
