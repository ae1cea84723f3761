// The webhooks domain's public surface: its contract and handlers, the delivery pipeline the worker runs, and the
// retention of events and their deliveries.
export { webhookContract } from './webhook.contract.js';
export { webhookHandlers } from './webhook.handlers.js';
export { WebhookEndpoint, WebhookDelivery, WebhookAttempt } from './webhook.schemas.js';
export { localWebhookSettings, webhookSettingsFrom } from './webhook-settings.js';
export {
  startWebhookDelivery,
  webhookDeliveryQueue,
  attemptExpirySeconds,
  WEBHOOK_DELIVERY_QUEUE,
  DEFAULT_DELIVERY_LIMITS,
  type DeliveryLimits,
  type DeliveryObserver,
  type DeliveryOutcome,
  type WebhookDelivery as WebhookDeliveryPipeline,
} from './delivery/webhook-delivery.jobs.js';
export {
  EVENT_RETENTION_BATCH,
  EVENT_RETENTION_QUEUE,
  pruneExpiredEvents,
  startEventRetention,
  type EventRetention,
} from './retention/event-retention.jobs.js';
