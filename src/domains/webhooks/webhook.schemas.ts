// Webhook resources: endpoints (subscription, target, secret state), their deliveries and each delivery's attempts.
import { z } from 'zod';
import { ListQuery, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { secret } from '../../contract/secrets.js';
import { EVENT_TYPES } from '../../contract/event.schemas.js';

export const WebhookUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2000)
  .meta({ description: 'Where deliveries are POSTed. Private, loopback and link-local targets are refused unless the deployment allows them.' });

export const WebhookSubscription = z
  .union([z.literal('*'), z.array(z.enum(EVENT_TYPES)).min(1).max(100)])
  .meta({
    id: 'WebhookSubscription',
    description: '`*` for every event type (including types added later), or a list of event types.',
  });
export type WebhookSubscription = z.infer<typeof WebhookSubscription>;

export const WebhookEndpoint = z
  .object({
    id: Uuid,
    url: WebhookUrl,
    events: WebhookSubscription,
    description: z.string().max(500).nullable(),
    active: z.boolean().meta({ description: 'An inactive endpoint receives no new deliveries; its pending ones end as dead.' }),
    secretRotatedAt: Timestamp.nullable(),
    previousSecretExpiresAt: Timestamp.nullable().meta({
      description: 'Until then deliveries carry a second `v1` signature made with the previous secret.',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: secret(z.string().meta({ description: 'The signing secret (UTF-8 bytes key the HMAC). Shown in this response only.' })),
}).meta({ id: 'WebhookEndpointWithSecret' });

export const DELIVERY_STATUSES = ['pending', 'delivered', 'retry_scheduled', 'dead'] as const;
export const DeliveryStatus = z.enum(DELIVERY_STATUSES).meta({ id: 'WebhookDeliveryStatus' });
export type DeliveryStatus = z.infer<typeof DeliveryStatus>;

export const WebhookDelivery = z
  .object({
    id: Uuid,
    webhookId: Uuid,
    eventId: Uuid.meta({ description: 'The event delivered; the same id on every attempt and replay.' }),
    eventType: z.string(),
    status: DeliveryStatus,
    attempts: z.number().int().min(0),
    responseStatus: z.number().int().nullable().meta({ description: 'HTTP status of the latest attempt.' }),
    responseBody: z.string().nullable().meta({ description: 'Body of the latest response, truncated to 4 KB.' }),
    error: z.string().nullable().meta({ description: 'Why the latest attempt failed, if it did.' }),
    nextRetryAt: Timestamp.nullable(),
    lastAttemptAt: Timestamp.nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookEndpointDetail = WebhookEndpoint.extend({
  deliveries: z.array(WebhookDelivery).meta({ description: 'The 20 most recent deliveries, newest first.' }),
}).meta({ id: 'WebhookEndpointDetail' });

export const WebhookAttempt = z
  .object({
    id: Uuid,
    deliveryId: Uuid,
    number: z.number().int().min(1),
    trigger: z.enum(['scheduled', 'replay']),
    succeeded: z.boolean(),
    responseStatus: z.number().int().nullable(),
    responseBody: z.string().nullable(),
    error: z.string().nullable(),
    durationMs: z.number().int().min(0),
    createdAt: Timestamp.meta({ description: 'When the attempt started.' }),
  })
  .meta({ id: 'WebhookAttempt' });
export type WebhookAttempt = z.infer<typeof WebhookAttempt>;

export const CreateWebhookBody = z.object({
  url: WebhookUrl,
  events: WebhookSubscription,
  description: z.string().max(500).optional(),
  active: z.boolean().optional(),
});
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;

export const UpdateWebhookBody = z.object({
  url: WebhookUrl.optional(),
  events: WebhookSubscription.optional(),
  description: z.string().max(500).nullable().optional(),
  active: z.boolean().optional(),
});
export type UpdateWebhookBody = z.infer<typeof UpdateWebhookBody>;

export const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;

export const RotateSecretBody = z.object({
  overlapSeconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_OVERLAP_SECONDS)
    .default(24 * 3600)
    .meta({ description: 'How long the previous secret keeps signing beside the new one (default 24 h; 0 revokes it now).' }),
});

export const ListDeliveriesQuery = ListQuery.extend({
  status: DeliveryStatus.optional().meta({ description: 'Only deliveries in this status.' }),
  eventId: Uuid.optional().meta({ description: 'Only the delivery of this event.' }),
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;
