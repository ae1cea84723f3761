// The worker as a real process (dist/workers/background.js) on a test database: several copies share the work, a
// SIGTERM lets the attempt in flight finish and be recorded, and a SIGKILL mid-delivery loses nothing: after a
// restart the same event (same id) arrives again.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '../../src/composition.js';
import { deriveKey } from '../../src/platform/secret-key.js';
import { baseEnv, freePort, spawnWorker, type WorkerProcess } from '../support/processes.js';
import { startTestService, type TestService } from '../support/service.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { createEndpoint, deliveryOf, deliveryWhen, independentlyVerifies, recordCustomerEvent } from '../webhooks/support.js';
import { until } from '../support/until.js';

const SECRET_KEY = randomBytes(32).toString('base64url');
let service: TestService;
const receivers: Receiver[] = [];
const workers: ChildProcess[] = [];

beforeAll(async () => {
  const webhooks = { secretsKey: deriveKey(SECRET_KEY, 'webhook-secrets'), allowPrivateTargets: true, timeoutMs: 1_000, retryScheduleMs: [1_000, 1_000] };
  service = await startTestService({ settings: defaultServiceSettings({ webhooks }) });
});
// A worker left running by a failed test would take the next test's deliveries.
afterEach(() => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await service?.close();
});

async function startWorker(): Promise<WorkerProcess> {
  const env = baseEnv({
    DATABASE_URL: service.db.url,
    SECRET_KEY,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_RETRY_SCHEDULE: '1s,1s',
  });
  const worker = await spawnWorker(env, await freePort());
  workers.push(worker.child);
  return worker;
}

async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

describe('the worker process', () => {
  it('delivers events recorded while no worker ran, and runs as several copies, each event delivered once', async () => {
    const { api } = await service.newWorkspace();
    const rx = await receiver();
    await createEndpoint(api, { url: rx.url, events: '*' });
    for (let i = 0; i < 20; i++) await recordCustomerEvent(api, `before-${i}`);
    const [a, b] = await Promise.all([startWorker(), startWorker()]);
    for (let i = 0; i < 20; i++) await recordCustomerEvent(api, `after-${i}`);
    const requests = await rx.waitFor(40);
    await new Promise((r) => setTimeout(r, 500));
    expect(new Set(requests.map((r) => r.body.id)).size).toBe(40);
    expect(rx.requests).toHaveLength(40);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    expect((await a.exited).code).toBe(0);
    expect((await b.exited).code).toBe(0);
  }, 60_000);

  it('finishes and records the attempt in flight when stopped with SIGTERM', async () => {
    const worker = await startWorker();
    const { api } = await service.newWorkspace();
    const rx = await receiver();
    rx.reply = () => ({ status: 200, delayMs: 700 });
    const endpoint = await createEndpoint(api, { url: rx.url, events: '*' });
    const { event } = await recordCustomerEvent(api);
    await rx.waitFor(1);
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    expect(await deliveryOf(api, endpoint.id, event.id)).toMatchObject({ status: 'delivered', attempts: 1, responseStatus: 200 });
    expect(worker.output()).not.toContain(endpoint.secret);
  }, 30_000);

  it('delivers the event again, same id, after being killed mid-delivery and restarted', async () => {
    const first = await startWorker();
    const { api } = await service.newWorkspace();
    const rx = await receiver();
    rx.reply = (_req, n) => (n === 1 ? 'hang' : { status: 200 });
    const endpoint = await createEndpoint(api, { url: rx.url, events: '*' });
    const { event } = await recordCustomerEvent(api);
    const [inFlight] = await rx.waitFor(1);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(await deliveryOf(api, endpoint.id, event.id)).toMatchObject({ status: 'pending', attempts: 0 });

    const second = await startWorker();
    const [, again] = await rx.waitFor(2, 20_000);
    expect(again!.headers['x-service-event-id']).toBe(event.id);
    expect(again!.body).toEqual(inFlight!.body);
    expect(independentlyVerifies(again!.rawBody, String(again!.headers['x-service-signature']), endpoint.secret)).toBe(true);
    await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'delivered');
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 60_000);
});
