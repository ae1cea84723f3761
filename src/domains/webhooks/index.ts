// The webhooks domain's public surface: its contract and handlers, and the delivery pipeline the worker runs.
export { webhookContract } from './webhook.contract.js';
export { webhookHandlers } from './webhook.handlers.js';
export { WebhookEndpoint, WebhookDelivery, WebhookAttempt } from './webhook.schemas.js';
export { configureWebhooks, webhookSettings, webhookSettingsFrom, type WebhookSettings } from './webhook-settings.js';
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
