// /metrics after real traffic: the web service (in this process, its partitions in threads) and the worker (a real
// process on its health port) each count what they did: a redemption once, a refusal under its code, the engine's batch
// and commit, a webhook delivery with its lag. Both expositions pass `promtool check metrics`; METRICS_TOKEN guards them.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '../../src/composition.js';
import { packageVersion, projectRoot } from '../../src/platform/paths.js';
import { deriveKey } from '../../src/platform/secret-key.js';
import { NO_OBSERVER } from '../../src/transports/request-observer.js';
import { has, parseMetrics, promtoolAvailable, promtoolCheck, scrape, valueOf } from '../support/metrics-text.js';
import { baseEnv, freePort, hasExited, spawnWorker } from '../support/processes.js';
import { startTestService, type TestService } from '../support/service.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { createEndpoint, deliveryWhen, recordCustomerEvent } from '../webhooks/support.js';

const SECRET_KEY = randomBytes(32).toString('base64url');
const TOKEN = randomBytes(24).toString('base64url');
let service: TestService;
let worker: { child: ChildProcess; url: string; output(): string };
let receiver: Receiver;

beforeAll(async () => {
  const webhooks = { secretsKey: deriveKey(SECRET_KEY, 'webhook-secrets'), allowPrivateTargets: true, timeoutMs: 1_000, retryScheduleMs: [1_000] };
  service = await startTestService({ metrics: { token: TOKEN }, settings: defaultServiceSettings({ webhooks }) });
  receiver = await startReceiver();
  const port = await freePort();
  const env = baseEnv({ DATABASE_URL: service.db.url, SECRET_KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TIMEOUT_MS: '1000', METRICS_TOKEN: TOKEN });
  const spawned = await spawnWorker(env, port);
  worker = { child: spawned.child, url: `http://127.0.0.1:${port}`, output: spawned.output };
}, 60_000);
afterAll(async () => {
  if (worker && !hasExited(worker.child)) {
    const exit = new Promise((r) => worker.child.once('exit', r));
    worker.child.kill('SIGTERM');
    await exit;
  }
  await receiver?.close();
  await service?.close();
});

const webMetrics = async () => parseMetrics(await scrape(service.baseUrl, TOKEN));

describe('GET /metrics', () => {
  it('answers only with the Bearer METRICS_TOKEN, on the web port and the worker\'s health port, and never logs it', async () => {
    for (const url of [service.baseUrl, worker.url]) {
      const bare = await fetch(`${url}/metrics`);
      expect(bare.status).toBe(401);
      expect(bare.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
      const ok = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(await ok.text()).toContain(`promotions_build_info{version="${packageVersion}",node_version="${process.versions.node}"} 1`);
    }
    expect(worker.output()).not.toContain(TOKEN);
  });

  it('counts a redemption once and a refusal under its code, with the engine\'s batch, commit, queues, slots and pools', async () => {
    const { api } = await service.newWorkspace();
    await api.create('/api/v1/vouchers', { code: 'MET-1', type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 100 }, redemptionLimit: 10 });
    const before = await webMetrics();
    const order = { order: { amount: 1_000, currency: 'EUR' } };
    expect((await api.post('/api/v1/vouchers/MET-1/redemption', order)).body.ok).toBe(true);
    expect((await api.post('/api/v1/vouchers/NO-SUCH/redemption', order)).body).toMatchObject({ ok: false, code: 'voucher_not_found' });
    expect((await api.post('/api/rpc/vouchers.validate', { code: 'NO-SUCH', ...order })).body).toMatchObject({ valid: false, code: 'voucher_not_found' });
    expect((await api.get('/api/v1/vouchers/NO-SUCH')).status).toBe(404);
    const after = await webMetrics();
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);

    const requests = 'promotions_http_request_duration_seconds_count';
    expect(delta(requests, { operation: 'redemptions.redeem', status_class: '2xx' })).toBe(2);
    expect(delta(requests, { operation: 'vouchers.validate', status_class: '2xx' })).toBe(1);
    expect(delta(requests, { operation: 'vouchers.get', status_class: '4xx' })).toBe(1);
    expect(delta('promotions_refusals_total', { operation: 'redemptions.redeem', code: 'voucher_not_found' })).toBe(1);
    expect(delta('promotions_refusals_total', { operation: 'vouchers.validate', code: 'voucher_not_found' })).toBe(1);
    expect(delta('promotions_refusals_total')).toBe(2);
    // The one redemption is the one write committed: one statement of one request.
    expect(delta('promotions_engine_batch_size_count')).toBe(1);
    expect(delta('promotions_engine_batch_size_sum')).toBe(1);
    expect(delta('promotions_engine_batch_size_bucket', { le: '1' })).toBe(1);
    expect(delta('promotions_engine_commit_duration_seconds_count')).toBe(1);
    expect(delta('promotions_engine_commit_duration_seconds_sum')).toBeGreaterThan(0);

    expect(valueOf(after, 'promotions_engine_partitions_answering')).toBe(2);
    expect(valueOf(after, 'promotions_engine_slots_held')).toBe(64);
    for (const partition of ['0', '1']) expect(has(after, 'promotions_engine_queue_depth', { partition })).toBe(true);
    expect(valueOf(after, 'promotions_engine_cached_vouchers')).toBeGreaterThanOrEqual(1);
    for (const pool of ['web', 'partition']) {
      expect(valueOf(after, 'promotions_db_pool_connections', { pool })).toBeGreaterThan(0);
      expect(has(after, 'promotions_db_pool_waiting_clients', { pool })).toBe(true);
    }
    expect(has(after, 'nodejs_eventloop_lag_p99_seconds')).toBe(true);
  });

  it('counts a webhook delivery in the worker with its lag from the event, and reads the outbox and the job queues', async () => {
    const { api } = await service.newWorkspace();
    const before = parseMetrics(await scrape(worker.url, TOKEN));
    const endpoint = await createEndpoint(api, { url: receiver.url, events: '*' });
    const recordedAt = Date.now();
    const { event } = await recordCustomerEvent(api);
    await deliveryWhen(api, endpoint.id, event.id, (d) => d.status === 'delivered');
    const elapsed = (Date.now() - recordedAt) / 1000;
    const after = parseMetrics(await scrape(worker.url, TOKEN));
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);

    expect(delta('promotions_webhook_deliveries_total', { status: 'delivered' })).toBe(1);
    expect(delta('promotions_webhook_deliveries_total')).toBe(1);
    expect(delta('promotions_webhook_delivery_lag_seconds_count')).toBe(1);
    const lag = delta('promotions_webhook_delivery_lag_seconds_sum');
    expect(lag).toBeGreaterThan(0);
    expect(lag).toBeLessThanOrEqual(elapsed + 1);
    expect(delta('promotions_webhook_delivery_lag_seconds_bucket', { le: '+Inf' })).toBe(1);
    expect(valueOf(after, 'promotions_outbox_backlog_events')).toBe(0);
    expect(has(after, 'promotions_outbox_oldest_age_seconds')).toBe(true);
    expect(has(after, 'promotions_job_queue_depth', { queue: 'webhook-delivery', state: 'due' })).toBe(true);
    expect(valueOf(after, 'promotions_db_pool_connections', { pool: 'worker' })).toBeGreaterThan(0);
  });

  it('is not served, and nothing is counted, with metrics off', async () => {
    const quiet = await startTestService();
    try {
      const { api } = await quiet.newWorkspace();
      expect((await api.post('/api/v1/vouchers/NO-SUCH/redemption', { order: { amount: 100, currency: 'EUR' } })).body.code).toBe('voucher_not_found');
      expect((await fetch(`${quiet.baseUrl}/metrics`)).status).toBe(404);
      expect(quiet.metricsRegistry).toBeUndefined();
      expect(quiet.service.pipeline.observer).toBe(NO_OBSERVER);
    } finally {
      await quiet.close();
    }
  });

  it('passes promtool check metrics on both ports', async () => {
    expect(promtoolAvailable(), 'promtool is missing: apt-get install prometheus (.ci/run does)').toBe(true);
    for (const url of [service.baseUrl, worker.url]) {
      const verdict = await promtoolCheck(await scrape(url, TOKEN));
      expect(verdict, `${url}: ${verdict.output}`).toEqual({ code: 0, output: '' });
    }
  });

  it('exposes every metric the Grafana dashboard and the alert rules in docs/ use, and the rules pass promtool', async () => {
    const families = new Set<string>();
    for (const url of [service.baseUrl, worker.url]) {
      for (const m of (await scrape(url, TOKEN)).matchAll(/^# TYPE (\S+) /gm)) families.add(m[1]!);
    }
    const used = (text: string) => [...text.matchAll(/\b((?:promotions|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, ''));
    const dashboard = readFileSync(path.join(projectRoot, 'docs/grafana-dashboard.json'), 'utf8');
    const rules = path.join(projectRoot, 'docs/prometheus-alerts.yml');
    const names = new Set([...used(dashboard), ...used(readFileSync(rules, 'utf8'))]);
    expect(names.size).toBeGreaterThan(15);
    expect([...names].filter((name) => !families.has(name))).toEqual([]);
    const check = spawnSync('promtool', ['check', 'rules', rules], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain('SUCCESS: 5 rules found');
  });
});
