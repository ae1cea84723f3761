// Webhook delivery end to end: the API records an event, the real pipeline (pg-boss, dispatcher, HTTP) delivers it to
// a real receiver on 127.0.0.1, signed so that an independent HMAC and the client verifier both accept it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/platform/webhook-signature.js';
import { recordEvent, recordEvents } from '../../src/domains/events/index.js';
import { withTransaction } from '../../src/platform/database.js';
import { startReceiver, type Receiver } from './receiver.js';
import {
  attemptsOf,
  createEndpoint,
  deliveryWhen,
  independentlyVerifies,
  recordCustomerEvent,
  startWebhookHarness,
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
  harness = await startWebhookHarness({}, { perEndpoint: 4 });
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

    const delivery = await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'delivered');
    expect(delivery).toMatchObject({ webhookId: endpoint.id, eventId: event.id, eventType: 'customer.created', attempts: 1, responseStatus: 200, responseBody: 'ok', error: null, nextRetryAt: null });
    const detail = await api.get(`/api/v1/webhooks/${endpoint.id}`);
    expect(detail.body.deliveries).toEqual([delivery]);
    expect(detail.body).not.toHaveProperty('secret');
    expect(harness.logs()).not.toContain(endpoint.secret);
  });
});

describe('targets by name', () => {
  it('resolves a host name through the guarded lookup and delivers', async () => {
    const { api } = await harness.service.newWorkspace();
    const rx = await receiver();
    const endpoint = await createEndpoint(api, { url: `http://localhost:${rx.port}/named`, events: '*' });
    const { event } = await recordCustomerEvent(api);
    const [request] = await rx.waitFor(1);
    expect(request!.path).toBe('/named');
    expect(request!.headers.host).toBe(`localhost:${rx.port}`);
    await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'delivered');
  });
});

describe('subscriptions', () => {
  it('delivers to `*` (future types included) and to matching lists only, never to inactive endpoints or other workspaces', async () => {
    const a = await harness.service.newWorkspace();
    const b = await harness.service.newWorkspace();
    const [all, redeemedOnly, inactive, foreign] = [await receiver(), await receiver(), await receiver(), await receiver()];
    // The `*` endpoint is created last: an endpoint never receives the event of its own creation, and so it
    // receives none of the webhook.created events of the others either.
    await createEndpoint(a.api, { url: redeemedOnly.url, events: ['voucher.redeemed'] });
    await createEndpoint(a.api, { url: inactive.url, events: '*', active: false });
    const allEndpoint = await createEndpoint(a.api, { url: all.url, events: '*' });
    await createEndpoint(b.api, { url: foreign.url, events: '*' });

    const { event: created } = await recordCustomerEvent(a.api);
    const redeemed = await recordEvent(harness.service.pool, a.workspaceId, 'voucher.redeemed', { redemptionId: created.id, voucherCode: 'X', amount: 100 });
    // A type this version does not know yet: a `*` subscription receives it too.
    const future = await recordEvent(harness.service.pool, a.workspaceId, 'loyalty.points_added' as never, { points: 5 });

    const toAll = await all.waitFor(3);
    expect(toAll.map((r) => r.body.id).sort()).toEqual([created.id, redeemed, future].sort());
    const toRedeemed = await redeemedOnly.waitFor(1);
    expect(toRedeemed[0]!.body).toMatchObject({ id: redeemed, type: 'voucher.redeemed', payload: { amount: 100 } });
    await deliveryWhen(a.api, allEndpoint.id, future, (d) => d.status === 'delivered');
    await new Promise((r) => setTimeout(r, 300));
    expect(redeemedOnly.requests).toHaveLength(1);
    expect(inactive.requests).toHaveLength(0);
    expect(foreign.requests).toHaveLength(0);
  });

  it('delivers nothing for a change that rolled back', async () => {
    const { api, workspaceId } = await harness.service.newWorkspace();
    const rx = await receiver();
    await createEndpoint(api, { url: rx.url, events: '*' });
    let rolledBack: string | undefined;
    await expect(
      withTransaction(harness.service.pool, async (tx) => {
        rolledBack = await recordEvent(tx, workspaceId, 'customer.created', { customerId: '00000000-0000-4000-8000-000000000000' });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const { event } = await recordCustomerEvent(api);
    await rx.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.requests.map((r) => r.body.id)).toEqual([event.id]);
    expect(rolledBack).toBeDefined();
    expect((await api.get(`/api/v1/events/${rolledBack}`)).status).toBe(404);
  });
});

describe('retries', () => {
  it('retries a failing receiver on the schedule, keeps every attempt, ends dead, and a replay later delivers the same event', async () => {
    const { api } = await harness.service.newWorkspace();
    const rx = await receiver();
    rx.reply = () => ({ status: 500, body: 'x'.repeat(10_000) });
    const endpoint = await createEndpoint(api, { url: rx.url, events: '*' });
    const { event } = await recordCustomerEvent(api);

    const scheduled = await deliveryWhen(api, endpoint.id, event.id, (d) => d.attempts === 1);
    expect(scheduled).toMatchObject({ status: 'retry_scheduled', responseStatus: 500, error: 'HTTP 500' });
    expect(scheduled.responseBody).toHaveLength(4096);
    expect(Date.parse(scheduled.nextRetryAt) - Date.parse(scheduled.lastAttemptAt)).toBeGreaterThanOrEqual(1_000);

    const dead = await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'dead', 8_000);
    expect(dead).toMatchObject({ attempts: 3, nextRetryAt: null, responseStatus: 500 });
    const attempts = await attemptsOf(api, endpoint.id, dead.id);
    expect(attempts.map((a) => [a.number, a.trigger, a.succeeded])).toEqual([
      [1, 'scheduled', false],
      [2, 'scheduled', false],
      [3, 'scheduled', false],
    ]);
    const gap = (i: number) => Date.parse(attempts[i + 1].createdAt) - (Date.parse(attempts[i].createdAt) + attempts[i].durationMs);
    expect(gap(0)).toBeGreaterThanOrEqual(1_000);
    expect(gap(0)).toBeLessThan(1_900);
    expect(gap(1)).toBeGreaterThanOrEqual(2_000);
    expect(gap(1)).toBeLessThan(2_900);
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.requests).toHaveLength(3);

    rx.reply = () => ({ status: 204 });
    const replay = await api.post(`/api/v1/webhooks/${endpoint.id}/deliveries/${dead.id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ id: dead.id, eventId: event.id });
    const delivered = await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'delivered');
    expect(delivered).toMatchObject({ attempts: 4, responseStatus: 204, error: null });
    expect(rx.requests.map((r) => r.headers['x-service-event-id'])).toEqual([event.id, event.id, event.id, event.id]);
    const history = await attemptsOf(api, endpoint.id, dead.id);
    expect(history.map((a) => [a.number, a.trigger, a.succeeded, a.responseStatus])).toEqual([
      [1, 'scheduled', false, 500],
      [2, 'scheduled', false, 500],
      [3, 'scheduled', false, 500],
      [4, 'replay', true, 204],
    ]);
  }, 20_000);

  it('records a receiver that is down, then delivers on the next step once it is up', async () => {
    const { api } = await harness.service.newWorkspace();
    const placeholder = await startReceiver();
    const port = placeholder.port;
    await placeholder.close();
    const endpoint = await createEndpoint(api, { url: `http://127.0.0.1:${port}/down`, events: ['customer.created'] });
    const { event } = await recordCustomerEvent(api);
    const failed = await deliveryWhen(api, endpoint.id, event.id, (d) => d.attempts === 1);
    expect(failed).toMatchObject({ status: 'retry_scheduled', responseStatus: null });
    expect(failed.error).toContain('ECONNREFUSED');

    const rx = await startReceiver(port);
    receivers.push(rx);
    const [request] = await rx.waitFor(1, 5_000);
    expect(request!.body.id).toBe(event.id);
    await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'delivered');
  });

  it('gives up on a slow receiver at the time-out and counts it as a failed attempt', async () => {
    const { api } = await harness.service.newWorkspace();
    const rx = await receiver();
    rx.reply = (_req, n) => (n === 1 ? { status: 200, delayMs: 3_000 } : { status: 200 });
    const endpoint = await createEndpoint(api, { url: rx.url, events: '*' });
    const { event } = await recordCustomerEvent(api);
    const failed = await deliveryWhen(api, endpoint.id, event.id, (d) => d.attempts === 1);
    expect(failed).toMatchObject({ status: 'retry_scheduled', error: 'timed out after 1000 ms', responseStatus: null });
    const [attempt] = await attemptsOf(api, endpoint.id, failed.id);
    expect(attempt.durationMs).toBeGreaterThanOrEqual(990);
    expect(attempt.durationMs).toBeLessThan(2_000);
    await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'delivered', 5_000);
  });

  it('ends the pending deliveries of a deactivated endpoint as dead, without another attempt', async () => {
    const { api } = await harness.service.newWorkspace();
    const rx = await receiver();
    rx.reply = () => ({ status: 503 });
    const endpoint = await createEndpoint(api, { url: rx.url, events: '*' });
    const { event } = await recordCustomerEvent(api);
    await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'retry_scheduled');
    expect((await api.patch(`/api/v1/webhooks/${endpoint.id}`, { active: false })).status).toBe(200);
    // The retry comes a second after the first attempt: on a loaded machine it may have been sent before the PATCH
    // (or be on its way while the PATCH commits). What must hold: every attempt the receiver saw is counted, and none
    // begins once the deactivation is known (at most the one already sent when the PATCH answered).
    const sentBefore = rx.requests.length;
    const dead = await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'dead', 5_000);
    expect(dead).toMatchObject({ error: 'the endpoint is inactive', nextRetryAt: null });
    expect(dead.attempts).toBe(rx.requests.length);
    expect(rx.requests.length).toBeGreaterThanOrEqual(1);
    expect(rx.requests.length - sentBefore).toBeLessThanOrEqual(1);
  });

  it('does not follow redirects', async () => {
    const { api } = await harness.service.newWorkspace();
    const [rx, elsewhere] = [await receiver(), await receiver()];
    rx.reply = () => ({ status: 302, headers: { location: elsewhere.url } });
    const endpoint = await createEndpoint(api, { url: rx.url, events: '*' });
    const { event } = await recordCustomerEvent(api);
    const failed = await deliveryWhen(api, endpoint.id, event.id, (d) => d.attempts === 1);
    expect(failed).toMatchObject({ status: 'retry_scheduled', responseStatus: 302, error: 'redirect (HTTP 302) not followed' });
    expect(elsewhere.requests).toHaveLength(0);
  });
});

describe('replay of an event to an endpoint', () => {
  it('delivers an event recorded before the endpoint existed, with its original id', async () => {
    const { api } = await harness.service.newWorkspace();
    const { event } = await recordCustomerEvent(api);
    const rx = await receiver();
    const endpoint = await createEndpoint(api, { url: rx.url, events: ['voucher.redeemed'] });
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.requests).toHaveLength(0);
    const res = await api.post(`/api/v1/webhooks/${endpoint.id}/events/${event.id}/replay`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ eventId: event.id, status: 'pending', attempts: 0 });
    const [request] = await rx.waitFor(1);
    expect(request!.body).toEqual(event);
    await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'delivered');
  });
});

describe('secret rotation', () => {
  it('signs with both secrets during the overlap, then with the new one only', async () => {
    const { api } = await harness.service.newWorkspace();
    const rx = await receiver();
    // Subscribed to customer events only, so that its own webhook.secret_rotated events do not interleave.
    const endpoint = await createEndpoint(api, { url: rx.url, events: ['customer.created'] });
    const rotated = await api.post(`/api/v1/webhooks/${endpoint.id}/secret/rotate`, { overlapSeconds: 3600 });
    expect(rotated.status).toBe(200);
    const newSecret: string = rotated.body.secret;
    expect(newSecret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(3500_000);

    await recordCustomerEvent(api);
    const [during] = await rx.waitFor(1);
    const header = String(during!.headers['x-service-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(independentlyVerifies(during!.rawBody, header, newSecret)).toBe(true);
    expect(independentlyVerifies(during!.rawBody, header, endpoint.secret)).toBe(true);
    expect(verifyWebhookSignature(during!.rawBody, header, endpoint.secret).valid).toBe(true);

    const revoked = await api.post(`/api/v1/webhooks/${endpoint.id}/secret/rotate`, { overlapSeconds: 0 });
    expect(revoked.body.previousSecretExpiresAt).toBeNull();
    await recordCustomerEvent(api);
    const [, after] = await rx.waitFor(2);
    const afterHeader = String(after!.headers['x-service-signature']);
    expect(afterHeader).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(independentlyVerifies(after!.rawBody, afterHeader, revoked.body.secret)).toBe(true);
    expect(independentlyVerifies(after!.rawBody, afterHeader, newSecret)).toBe(false);
    expect(independentlyVerifies(after!.rawBody, afterHeader, endpoint.secret)).toBe(false);
    expect(harness.logs()).not.toContain(newSecret);
  });
});

describe('isolation', () => {
  it('bounds the attempts at one endpoint, and a hanging endpoint does not hold back another', async () => {
    const { api, workspaceId } = await harness.service.newWorkspace();
    const [slow, fast] = [await receiver(), await receiver()];
    slow.reply = () => 'hang';
    await createEndpoint(api, { url: slow.url, events: ['voucher.redeemed'] });
    const fastEndpoint = await createEndpoint(api, { url: fast.url, events: ['customer.created'] });
    await recordEvents(
      harness.service.pool,
      Array.from({ length: 30 }, (_, i) => ({ workspaceId, type: 'voucher.redeemed' as const, payload: { redemptionId: String(i), voucherCode: 'SLOW', amount: i } })),
    );
    await slow.waitFor(4);
    const recordedAt = Date.now();
    const { event } = await recordCustomerEvent(api);
    const [request] = await fast.waitFor(1, 2_000);
    expect(request!.body.id).toBe(event.id);
    expect(request!.receivedAt - recordedAt).toBeLessThan(900);
    // Four attempts hang until the 1 s time-out; no fifth starts meanwhile.
    expect(slow.requests.length).toBe(4);
    await deliveryWhen(api, fastEndpoint.id, event.id, (d) => d.status === 'delivered');
  });
});
