// Shared set-up of the webhook tests: a real service, a real receiver, and the real delivery pipeline (pg-boss on the
// test database) running in this process with a schedule in seconds.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Writable } from 'node:stream';
import type { DeliveryLimits } from '../../src/domains/webhooks/index.js';
import type { WebhookSettings } from '../../src/contract/service-settings.js';
import { defaultServiceSettings } from '../../src/composition.js';
import { startBackgroundJobs, type BackgroundJobs } from '../../src/jobs/background-jobs.js';
import { createPool, type Pool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/until.js';

export interface WebhookHarness {
  service: TestService;
  settings: WebhookSettings;
  workerPool: Pool;
  jobs: BackgroundJobs;
  logs(): string;
  close(): Promise<void>;
}

export async function startWebhookHarness(
  overrides: Partial<WebhookSettings> = {},
  limits: Partial<DeliveryLimits> = {},
): Promise<WebhookHarness> {
  const settings: WebhookSettings = {
    secretsKey: randomBytes(32),
    allowPrivateTargets: true,
    timeoutMs: 1_000,
    retryScheduleMs: [1_000, 2_000],
    ...overrides,
  };
  const service = await startTestService({ settings: defaultServiceSettings({ webhooks: settings }) });
  let output = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      output += String(chunk);
      done();
    },
  });
  const log = createLogger('debug', sink);
  const workerPool = createPool(service.db.url, { max: 8, log });
  const jobs = await startBackgroundJobs({ pool: workerPool, log, webhooks: settings, limits: { pollMs: 100, dispatchPollMs: 50, ...limits } });
  return {
    service,
    settings,
    workerPool,
    jobs,
    logs: () => output,
    async close() {
      await jobs.stop();
      await workerPool.end();
      await service.close();
    },
  };
}

/** HMAC-SHA256 of `<t>.<raw body>` computed here, independently of the service's signing code. */
export function independentlyVerifies(rawBody: Buffer, header: string, secret: string): boolean {
  const parts = header.split(',');
  const t = parts.find((p) => p.startsWith('t='))?.slice(2);
  if (!t || !/^\d+$/.test(t)) return false;
  const expected = createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${t}.`), rawBody])).digest();
  return parts
    .filter((p) => p.startsWith('v1='))
    .some((p) => {
      const given = Buffer.from(p.slice(3), 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

export async function createEndpoint(api: ApiClient, body: Record<string, unknown>) {
  const res = await api.post('/api/v1/webhooks', body);
  if (res.status !== 201) throw new Error(`webhook creation answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as { id: string; secret: string; url: string };
}

/** A customer.created event, recorded by the API in the customer's transaction. */
export async function recordCustomerEvent(api: ApiClient, sourceId = `c-${randomBytes(4).toString('hex')}`) {
  const res = await api.post('/api/v1/customers', { sourceId });
  if (res.status !== 201) throw new Error(`customer creation answered ${res.status}`);
  const events = await api.get(`/api/v1/events?type=customer.created&limit=100`);
  const event = events.body.data.find((e: any) => e.payload.customerId === res.body.id);
  return { customer: res.body, event };
}

export async function deliveryOf(api: ApiClient, webhookId: string, eventId: string) {
  const res = await api.get(`/api/v1/webhooks/${webhookId}/deliveries?eventId=${eventId}`);
  return res.body.data[0] as any;
}

/**
 * Polls the delivery of an event until `ready` holds for it. `timeoutMs` is a bound against a hang, not a measure:
 * 10 s passed on a machine starved to a fifth of its speed (2026-11-29).
 */
export function deliveryWhen(api: ApiClient, webhookId: string, eventId: string, ready: (delivery: any) => boolean, timeoutMs = 60_000) {
  return until(async () => {
    const delivery = await deliveryOf(api, webhookId, eventId);
    return delivery && ready(delivery) && delivery;
  }, timeoutMs, `delivery of ${eventId}`);
}

export async function attemptsOf(api: ApiClient, webhookId: string, deliveryId: string) {
  const res = await api.get(`/api/v1/webhooks/${webhookId}/deliveries/${deliveryId}/attempts?limit=100`);
  return (res.body.data as any[]).slice().reverse();
}
