// Traces with the OpenTelemetry SDK and an in-memory exporter: one trace from the HTTP request through the operation to
// the partition thread's batch and its commit (the trace's ids cross the message to the thread), on the hot path and
// through express; a webhook delivery is a span from its event, and the receiver gets the trace's traceparent.
import { randomBytes } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '../../src/composition.js';
import { startBackgroundJobs, type BackgroundJobs } from '../../src/jobs/background-jobs.js';
import { createPool, type Pool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { startTracing, type Tracing } from '../../src/platform/tracing.js';
import { startTestService, type TestService } from '../support/service.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { createEndpoint, recordCustomerEvent } from '../webhooks/support.js';
import { until } from '../support/until.js';

const exporter = new InMemorySpanExporter();
let tracing: Tracing | undefined;
let service: TestService;
let receiver: Receiver;
let workerPool: Pool;
let jobs: BackgroundJobs;

beforeAll(async () => {
  tracing = await startTracing({ serviceName: 'promotions-test', exporter });
  const settings = { secretsKey: randomBytes(32), allowPrivateTargets: true, timeoutMs: 1_000, retryScheduleMs: [1_000] };
  service = await startTestService({ traced: true, settings: defaultServiceSettings({ webhooks: settings }) });
  receiver = await startReceiver();
  const log = createLogger('silent');
  workerPool = createPool(service.db.url, { max: 4, log });
  jobs = await startBackgroundJobs({ pool: workerPool, log, webhooks: settings, limits: { pollMs: 100, dispatchPollMs: 50 } });
});
afterAll(async () => {
  await jobs?.stop();
  await workerPool?.end();
  await receiver?.close();
  await service?.close();
  await tracing?.shutdown();
});

const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const traceOf = (span: ReadableSpan) => span.spanContext().traceId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** The spans of the one trace holding an operation span of `name` that has `attribute` (spans end after the answer). */
async function traceWith(name: string, match: (span: ReadableSpan) => boolean): Promise<ReadableSpan[]> {
  return until(async () => {
    const spans = exporter.getFinishedSpans();
    const operation = spans.find((s) => s.name === name && match(s));
    const trace = operation && spans.filter((s) => traceOf(s) === traceOf(operation));
    return trace && trace.some((s) => s.kind === SpanKind.SERVER) && trace;
  }, 5_000, `a trace of ${name}`);
}

describe('a trace from request to commit', () => {
  for (const face of ['hot path', 'rpc'] as const) {
    it(`shares one trace id from the HTTP span through the operation to the engine's batch and commit (${face})`, async () => {
      const { api, workspaceId } = await service.newWorkspace();
      const code = `TR-${face === 'rpc' ? 'R' : 'H'}-${randomBytes(3).toString('hex')}`;
      await api.create('/api/v1/vouchers', { code, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 100 } });
      const order = { amount: 1_000, currency: 'EUR' };
      const answer = face === 'rpc' ? await api.post('/api/rpc/redemptions.redeem', { code, order }) : await api.post(`/api/v1/vouchers/${code}/redemption`, { order });
      expect(answer.body.ok).toBe(true);

      const spans = await traceWith('redemptions.redeem', (s) => s.attributes['promotions.workspace_id'] === workspaceId);
      const http = spans.find((s) => s.kind === SpanKind.SERVER)!;
      const operation = spans.find((s) => s.name === 'redemptions.redeem')!;
      const batch = await until(async () => exporter.getFinishedSpans().find((s) => s.name === 'engine.batch' && parentOf(s) === idOf(operation)), 5_000, 'the batch span');
      const commit = exporter.getFinishedSpans().find((s) => s.name === 'engine.commit' && parentOf(s) === idOf(batch));
      expect(commit, 'the commit span under the batch').toBeDefined();
      expect(new Set([http, operation, batch, commit!].map(traceOf)).size).toBe(1);
      expect(parentOf(operation)).toBe(idOf(http));
      expect(http.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
      expect(batch.attributes['engine.batch.writes']).toBeGreaterThanOrEqual(1);
      // The partition's times sit inside the request's.
      const ms = (t: [number, number]) => t[0] * 1e3 + t[1] / 1e6;
      expect(ms(commit!.startTime)).toBeGreaterThanOrEqual(ms(batch.startTime) - 1);
      expect(ms(commit!.endTime)).toBeLessThanOrEqual(ms(http.endTime) + 1);
      expect(ms(batch.startTime)).toBeGreaterThanOrEqual(ms(http.startTime) - 1);
    });
  }

  it('continues a caller\'s trace sent as traceparent, and marks a refusal on the operation span', async () => {
    const { api } = await service.newWorkspace();
    const traceId = randomBytes(16).toString('hex');
    const res = await api.request('POST', '/api/v1/vouchers/NOPE/validate', { body: { order: { amount: 100, currency: 'EUR' } }, headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
    expect(res.body.valid).toBe(false);
    const spans = await until(async () => {
      const found = exporter.getFinishedSpans().filter((s) => traceOf(s) === traceId);
      return found.length >= 2 && found;
    }, 5_000, 'the continued trace');
    expect(spans.find((s) => s.name === 'vouchers.validate')!.attributes['promotions.refusal_code']).toBe('voucher_not_found');
  });
});

describe('a webhook delivery', () => {
  it('is a span from its event\'s recording, with the attempt inside it, whose trace the receiver is sent', async () => {
    const { api } = await service.newWorkspace();
    await createEndpoint(api, { url: receiver.url, events: '*' });
    const { event } = await recordCustomerEvent(api);
    const [request] = await receiver.waitFor(1);
    const delivery = await until(async () => exporter.getFinishedSpans().find((s) => s.name === 'webhook.delivery' && s.attributes['webhook.event_id'] === event.id), 5_000, 'the delivery span');
    const attempt = exporter.getFinishedSpans().find((s) => s.name === 'webhook.attempt' && parentOf(s) === idOf(delivery))!;
    expect(delivery.kind).toBe(SpanKind.PRODUCER);
    expect(delivery.attributes).toMatchObject({ 'webhook.event_type': 'customer.created', 'webhook.step': 0, 'webhook.trigger': 'scheduled', 'webhook.succeeded': true });
    expect(attempt.attributes['http.response.status_code']).toBe(200);
    const startMs = delivery.startTime[0] * 1e3 + delivery.startTime[1] / 1e6;
    expect(Math.abs(startMs - new Date(event.createdAt).getTime())).toBeLessThan(1);
    expect(request!.headers.traceparent).toBe(`00-${traceOf(attempt)}-${idOf(attempt)}-01`);
  });
});
