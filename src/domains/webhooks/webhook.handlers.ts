// Webhook handlers.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { findDelivery, listAttempts, listDeliveries } from './delivery/delivery.queries.js';
import { webhookContract } from './webhook.contract.js';
import { deleteEndpoint, findEndpoint, listEndpoints } from './webhook.queries.js';
import { changeWebhook, createWebhook, getWebhook, replayDelivery, replayEvent, rotateWebhookSecret } from './webhook.service.js';

export const webhookHandlers = implement(webhookContract, {
  async createWebhook({ input, auth, deps }) {
    const { url, events, description, active } = input;
    return createWebhook(deps.db, auth.workspaceId, { url, events, description, active });
  },
  async listWebhooks({ input, auth, deps }) {
    return listEndpoints(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async getWebhook({ input, auth, deps }) {
    return getWebhook(deps.db, auth.workspaceId, input.id);
  },
  async updateWebhook({ input, auth, deps }) {
    const { id, ...patch } = input;
    return changeWebhook(deps.db, auth.workspaceId, id, patch);
  },
  async deleteWebhook({ input, auth, deps }) {
    if (!(await deleteEndpoint(deps.db, auth.workspaceId, input.id))) throw problem('not_found', 'no such webhook');
  },
  async rotateWebhookSecret({ input, auth, deps }) {
    return rotateWebhookSecret(deps.db, auth.workspaceId, input.id, input.overlapSeconds);
  },
  async listDeliveries({ input, auth, deps }) {
    if (!(await findEndpoint(deps.db, auth.workspaceId, input.id))) throw problem('not_found', 'no such webhook');
    const { id, ...request } = input;
    return listDeliveries(deps.db, deps.cursors, auth.workspaceId, id, request);
  },
  async getDelivery({ input, auth, deps }) {
    const delivery = await findDelivery(deps.db, auth.workspaceId, input.id, input.deliveryId);
    if (!delivery) throw problem('not_found', 'no such delivery');
    return delivery;
  },
  async listAttempts({ input, auth, deps }) {
    if (!(await findDelivery(deps.db, auth.workspaceId, input.id, input.deliveryId))) throw problem('not_found', 'no such delivery');
    return listAttempts(deps.db, deps.cursors, auth.workspaceId, input.deliveryId, input);
  },
  async replayDelivery({ input, auth, deps }) {
    return replayDelivery(deps.db, auth.workspaceId, input.id, input.deliveryId);
  },
  async replayEvent({ input, auth, deps }) {
    return replayEvent(deps.db, auth.workspaceId, input.id, input.eventId);
  },
});
