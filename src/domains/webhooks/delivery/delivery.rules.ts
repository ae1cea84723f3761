// Pure delivery decisions: when the next scheduled attempt runs, and what a delivery's envelope and headers are.
import { signWebhookPayload } from '../../../platform/webhook-signature.js';

/** After the attempt of `step` (0 = first) failed: when the next runs, or null when the schedule is used up (dead). */
export function nextRetryAt(step: number, failedAt: Date, scheduleMs: readonly number[]): Date | null {
  const delay = scheduleMs[step];
  return delay === undefined ? null : new Date(failedAt.getTime() + delay);
}

export interface EnvelopeSource {
  eventId: string;
  eventType: string;
  payload: Record<string, unknown>;
  eventCreatedAt: Date;
}

/** The body as sent (and signed): the event envelope `{ id, type, payload, createdAt }`. */
export function envelopeBody(event: EnvelopeSource): string {
  return JSON.stringify({ id: event.eventId, type: event.eventType, payload: event.payload, createdAt: event.eventCreatedAt.toISOString() });
}

export function deliveryHeaders(
  event: EnvelopeSource & { deliveryId: string },
  body: string,
  secrets: readonly string[],
  userAgent: string,
  now: Date = new Date(),
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'x-service-event-type': event.eventType,
    'x-service-event-id': event.eventId,
    'x-service-delivery-id': event.deliveryId,
    'x-service-signature': signWebhookPayload(body, secrets, Math.floor(now.getTime() / 1000)),
  };
}
