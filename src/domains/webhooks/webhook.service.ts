// Webhook use cases: endpoints with a target check and a sealed secret shown once, secret rotation with an overlap,
// and replays, which the API only requests (the worker's dispatcher enqueues the attempt).
import { randomUUID } from 'node:crypto';
import { invalidField, problem } from '../../contract/problems.js';
import { sqlState, type Sql } from '../../platform/database.js';
import { recentDeliveries, requestEventDelivery, requestReplay } from './delivery/delivery.queries.js';
import { findEndpoint, insertEndpoint, replaceEndpointSecret, updateEndpoint } from './webhook.queries.js';
import type { CreateWebhookBody, UpdateWebhookBody, WebhookDelivery, WebhookEndpoint } from './webhook.schemas.js';
import { generateWebhookSecret, sealSecret } from './webhook-secret.js';
import { webhookSettings } from './webhook-settings.js';
import { refuseTarget } from './webhook-target.js';

const RECENT_DELIVERIES = 20;
const FOREIGN_KEY_VIOLATION = '23503';

async function assertTargetAllowed(url: string): Promise<void> {
  const reason = await refuseTarget(url, webhookSettings().allowPrivateTargets);
  if (reason) throw invalidField('url', `the webhook URL ${reason}`);
}

export async function createWebhook(db: Sql, workspaceId: string, body: CreateWebhookBody): Promise<WebhookEndpoint & { secret: string }> {
  await assertTargetAllowed(body.url);
  const id = randomUUID();
  const secret = generateWebhookSecret();
  const endpoint = await insertEndpoint(db, workspaceId, {
    id,
    url: body.url,
    events: body.events,
    description: body.description,
    active: body.active,
    sealedSecret: sealSecret(webhookSettings().secretsKey, id, secret),
  });
  return { ...endpoint, secret };
}

export async function getWebhook(db: Sql, workspaceId: string, id: string) {
  const endpoint = await findEndpoint(db, workspaceId, id);
  if (!endpoint) throw problem('not_found', 'no such webhook');
  return { ...endpoint, deliveries: await recentDeliveries(db, workspaceId, id, RECENT_DELIVERIES) };
}

export async function changeWebhook(db: Sql, workspaceId: string, id: string, patch: UpdateWebhookBody): Promise<WebhookEndpoint> {
  if (patch.url !== undefined) await assertTargetAllowed(patch.url);
  const endpoint = await updateEndpoint(db, workspaceId, id, patch);
  if (!endpoint) throw problem('not_found', 'no such webhook');
  return endpoint;
}

export async function rotateWebhookSecret(
  db: Sql,
  workspaceId: string,
  id: string,
  overlapSeconds: number,
): Promise<WebhookEndpoint & { secret: string }> {
  const secret = generateWebhookSecret();
  const endpoint = await replaceEndpointSecret(db, workspaceId, id, sealSecret(webhookSettings().secretsKey, id, secret), overlapSeconds);
  if (!endpoint) throw problem('not_found', 'no such webhook');
  return { ...endpoint, secret };
}

async function activeEndpoint(db: Sql, workspaceId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await findEndpoint(db, workspaceId, id);
  if (!endpoint) throw problem('not_found', 'no such webhook');
  if (!endpoint.active) throw problem('conflict', 'the webhook is inactive; activate it before replaying');
  return endpoint;
}

export async function replayDelivery(db: Sql, workspaceId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  await activeEndpoint(db, workspaceId, endpointId);
  const delivery = await requestReplay(db, workspaceId, endpointId, deliveryId);
  if (!delivery) throw problem('not_found', 'no such delivery');
  return delivery;
}

export async function replayEvent(db: Sql, workspaceId: string, endpointId: string, eventId: string): Promise<WebhookDelivery> {
  await activeEndpoint(db, workspaceId, endpointId);
  const delivery = await requestEventDelivery(db, workspaceId, endpointId, eventId).catch((error: unknown) => {
    // The endpoint was deleted between the check and the insert.
    if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw problem('not_found', 'no such webhook');
    throw error;
  });
  if (!delivery) throw problem('not_found', 'no such event');
  return delivery;
}
