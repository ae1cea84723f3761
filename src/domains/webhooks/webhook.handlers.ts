// Webhook handlers: reads through the queries, each change through the service in its operation's unit of work.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { findDelivery, listAttempts, listDeliveries } from './delivery/delivery.queries.js';
import { webhookContract } from './webhook.contract.js';
import { findEndpoint, listEndpoints } from './webhook.queries.js';
import {
  assertTargetAllowed,
  changeWebhook,
  createWebhook,
  getWebhook,
  removeWebhook,
  replayDelivery,
  replayEvent,
  rotateWebhookSecret,
} from './webhook.service.js';

export const webhookHandlers = implement(webhookContract, {
  async createWebhook({ input, actor, deps, mutate }) {
    const { url, events, description, active } = input;
    const settings = deps.settings.webhooks;
    await assertTargetAllowed(settings, url);
    return mutate((unit) => createWebhook(unit, settings, actor.workspaceId, { url, events, description, active }));
  },
  async listWebhooks({ input, actor, deps }) {
    return listEndpoints(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async getWebhook({ input, actor, deps }) {
    return getWebhook(deps.db, actor.workspaceId, input.id);
  },
  async updateWebhook({ input, actor, deps, mutate }) {
    const { id, ...patch } = input;
    if (patch.url !== undefined) await assertTargetAllowed(deps.settings.webhooks, patch.url);
    return mutate((unit) => changeWebhook(unit, actor.workspaceId, id, patch));
  },
  async deleteWebhook({ input, actor, mutate }) {
    await mutate((unit) => removeWebhook(unit, actor.workspaceId, input.id));
  },
  async rotateWebhookSecret({ input, actor, deps, mutate }) {
    const settings = deps.settings.webhooks;
    return mutate((unit) => rotateWebhookSecret(unit, settings, actor.workspaceId, input.id, input.overlapSeconds));
  },
  async listDeliveries({ input, actor, deps }) {
    if (!(await findEndpoint(deps.db, actor.workspaceId, input.id))) throw problem('not_found', 'no such webhook');
    const { id, ...request } = input;
    return listDeliveries(deps.db, deps.cursors, actor.workspaceId, id, request);
  },
  async getDelivery({ input, actor, deps }) {
    const delivery = await findDelivery(deps.db, actor.workspaceId, input.id, input.deliveryId);
    if (!delivery) throw problem('not_found', 'no such delivery');
    return delivery;
  },
  async listAttempts({ input, actor, deps }) {
    if (!(await findDelivery(deps.db, actor.workspaceId, input.id, input.deliveryId))) throw problem('not_found', 'no such delivery');
    return listAttempts(deps.db, deps.cursors, actor.workspaceId, input.deliveryId, input);
  },
  async replayDelivery({ input, actor, mutate }) {
    return mutate((unit) => replayDelivery(unit, actor.workspaceId, input.id, input.deliveryId));
  },
  async replayEvent({ input, actor, mutate }) {
    return mutate((unit) => replayEvent(unit, actor.workspaceId, input.id, input.eventId));
  },
});
