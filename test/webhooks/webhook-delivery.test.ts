// Webhook delivery end to end: the API records an event, the real pipeline (pg-boss, dispatcher, HTTP) delivers it to
// a real receiver on 127.0.0.1, signed so that an independent HMAC and the client verifier both accept it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/client/webhook-signature.js';
import { recordEvent } from '../../src/domains/events/index.js';
import { withTransaction } from '../../src/platform/database.js';
import { startReceiver, type Receiver } from './receiver.js';
import {
  attemptsOf,
  createEndpoint,
  deliveryOf,
  independentlyVerifies,
  recordCustomerEvent,
  startWebhookHarness,
  until,
  type WebhookHarness,
} from './support.js';

let harness: WebhookHarness;
const receivers: Receiver[] = [];
async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}
beforeAll(async () => {
  harness = await startWebhookHarness();
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await harness?.close();
});

describe('delivery', () => {
  it('POSTs the event envelope with its headers, signed over the exact bytes sent', async () => {
    const { api } = await harness.service.newWorkspace();
    const rx = await receiver();
    const endpoint = await createEndpoint(api, { url: rx.url, events: '*' });
    const { event } = await recordCustomerEvent(api);

    const [request] = await rx.waitFor(1);
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/hooks');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-service-event-type']).toBe('customer.created');
    expect(request!.headers['x-service-event-id']).toBe(event.id);
    expect(request!.body).toEqual(event);
    expect(Object.keys(request!.body)).toEqual(['id', 'type', 'payload', 'createdAt']);

    const signature = String(request!.headers['x-service-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(independentlyVerifies(request!.rawBody, signature, endpoint.secret)).toBe(true);
    expect(verifyWebhookSignature(request!.rawBody, signature, endpoint.secret)).toMatchObject({ valid: true });
    expect(verifyWebhookSignature(request!.rawBody.toString() + ' ', signature, endpoint.secret)).toEqual({ valid: false, reason: 'signature_mismatch' });
    expect(independentlyVerifies(request!.rawBody, signature, 'whsec_other')).toBe(false);

    const delivery = await until(async () => {
      const d = await deliveryOf(api, endpoint.id, event.id);
      return d?.status === 'delivered' && d;
    });
    expect(delivery).toMatchObject({ webhookId: endpoint.id, eventId: event.id, eventType: 'customer.created', attempts: 1, responseStatus: 200, responseBody: 'ok', error: null, nextRetryAt: null });
    const detail = await api.get(`/api/v1/webhooks/${endpoint.id}`);
    expect(detail.body.deliveries).toEqual([delivery]);
    expect(detail.body).not.toHaveProperty('secret');
    expect(harness.logs()).not.toContain(endpoint.secret);
  });
});
