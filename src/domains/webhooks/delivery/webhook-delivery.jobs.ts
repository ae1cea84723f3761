// The webhook delivery pipeline of a worker process. One pg-boss job per attempt on the `webhook-delivery` queue:
// the dispatcher turns committed events into deliveries and their first jobs; the runner fetches jobs (bounded
// overall and per endpoint), POSTs, and a recorder commits each batch of outcomes together with the next jobs. Each
// attempt is a span from its event's recording (traces, when on) and is told to the observer (metrics).
import type PgBoss from 'pg-boss';
import { z } from 'zod';
import { withTransaction, type Pool, type Sql } from '../../../platform/database.js';
import type { Logger } from '../../../platform/logger.js';
import { inSpan, SpanKind, traceHeaders } from '../../../platform/tracing.js';
import { openSecret } from '../webhook-secret.js';
import type { WebhookSettings } from '../../../contract/service-settings.js';
import { createDeliveryClient, type AttemptResult } from './delivery-http.js';
import {
  claimRequestedJobs,
  dispatchEvents,
  loadAttemptContexts,
  type AttemptContext,
  type AttemptRecord,
} from './delivery-pipeline.queries.js';
import { deliveryHeaders, envelopeBody, nextRetryAt } from './delivery.rules.js';
import { createRecorder, type Outcome } from './delivery-recorder.js';
import { endpointLanes } from './endpoint-lanes.js';
import { wakeableSleep } from './wakeable-sleep.js';

export const WEBHOOK_DELIVERY_QUEUE = 'webhook-delivery';

const DeliveryJobData = z.object({
  deliveryId: z.uuid(),
  trigger: z.enum(['scheduled', 'replay']),
  step: z.number().int().min(0),
});
export type DeliveryJobData = z.infer<typeof DeliveryJobData>;

/**
 * A fetched job not finished within this is taken back by pg-boss maintenance and retried (a worker killed
 * mid-attempt): room for one attempt waiting behind its endpoint's limit, one running, and the recording.
 */
export function attemptExpirySeconds(timeoutMs: number): number {
  return Math.ceil((2 * timeoutMs) / 1000) + 2;
}

export function webhookDeliveryQueue(settings: WebhookSettings): PgBoss.Queue {
  // pg-boss retries only jobs that expired (crashes); failed attempts are scheduled by us, one job per attempt.
  return { name: WEBHOOK_DELIVERY_QUEUE, policy: 'standard', retryLimit: 20, retryDelay: 1, expireInSeconds: attemptExpirySeconds(settings.timeoutMs) };
}

export interface DeliveryLimits {
  /** Jobs held by this worker at once (running, waiting for their endpoint, or being recorded). */
  concurrency: number;
  /** Attempts running at once against one endpoint; more wait in its line (see endpoint-lanes.ts) or go back to the queue. */
  perEndpoint: number;
  fetchBatch: number;
  /** Idle polling of the queue (retries falling due) and of the outbox. */
  pollMs: number;
  dispatchPollMs: number;
  dispatchBatch: number;
}

export const DEFAULT_DELIVERY_LIMITS: DeliveryLimits = Object.freeze({
  concurrency: 256,
  perEndpoint: 32,
  fetchBatch: 100,
  pollMs: 500,
  dispatchPollMs: 100,
  dispatchBatch: 1000,
});

// A job for an endpoint already at its limit with a full line goes back to the queue for this long.
const DEFER_MS = 1_000;
const DISPATCH_RETRY_MS = 2_000;

export interface WebhookDelivery {
  wake(): void;
  stop(): Promise<void>;
}

/** What an attempt made of its delivery (an endpoint found inactive ends it dead without one). */
export type DeliveryOutcome = 'delivered' | 'retry_scheduled' | 'dead' | 'replay_failed';

/** Told of every attempt's outcome; a delivery on schedule (not a replay) with the time from its event's recording. */
export interface DeliveryObserver {
  outcome(outcome: DeliveryOutcome, lagSeconds?: number): void;
}

const NO_OBSERVER: DeliveryObserver = { outcome() {} };

export function pgBossExecutor(tx: Sql): PgBoss.Db {
  return { executeSql: (text, values) => tx.query(text, values) };
}

export function startWebhookDelivery(options: {
  boss: PgBoss;
  pool: Pool;
  log: Logger;
  settings: WebhookSettings;
  userAgent: string;
  limits?: Partial<DeliveryLimits>;
  observer?: DeliveryObserver | undefined;
}): WebhookDelivery {
  const { boss, pool, log, settings } = options;
  const observer = options.observer ?? NO_OBSERVER;
  const limits = { ...DEFAULT_DELIVERY_LIMITS, ...options.limits };
  const client = createDeliveryClient({
    timeoutMs: settings.timeoutMs,
    allowPrivateTargets: settings.allowPrivateTargets,
    userAgent: options.userAgent,
    maxSocketsPerHost: limits.perEndpoint,
  });
  const fetchSleep = wakeableSleep();
  const dispatchSleep = wakeableSleep();
  let stopping = false;
  let held = 0;
  const lanes = endpointLanes<PgBoss.Job<DeliveryJobData>>({
    perEndpoint: limits.perEndpoint,
    maxLine: Math.max(limits.perEndpoint, Math.floor(limits.concurrency / 2)),
    // Waiting at most about one time-out keeps a waiting job well inside its pg-boss expiry.
    waitBudgetMs: Math.min(settings.timeoutMs, 2_000),
  });

  const recorder = createRecorder({ pool, boss, log, queue: WEBHOOK_DELIVERY_QUEUE, deferMs: DEFER_MS });
  const release = (count: number) => {
    held -= count;
    fetchSleep.wake();
  };
  const submit = (outcome: Outcome) => void recorder.submit(outcome).then(() => release(1));

  async function dispatchOnce(): Promise<number> {
    const created = await withTransaction(pool, async (tx) => {
      const { events, deliveryIds } = await dispatchEvents(tx, limits.dispatchBatch);
      const requested = await claimRequestedJobs(tx, limits.dispatchBatch);
      const jobs: PgBoss.JobInsert<DeliveryJobData>[] = [
        ...deliveryIds.map((deliveryId) => ({ name: WEBHOOK_DELIVERY_QUEUE, data: { deliveryId, trigger: 'scheduled' as const, step: 0 } })),
        ...requested.map((r) => ({ name: WEBHOOK_DELIVERY_QUEUE, data: { deliveryId: r.deliveryId, trigger: r.trigger, step: r.step } })),
      ];
      if (jobs.length) await boss.insert(jobs, { db: pgBossExecutor(tx) });
      return { events, jobs: jobs.length };
    });
    if (created.jobs > 0) fetchSleep.wake();
    return Math.max(created.events, created.jobs);
  }

  async function dispatchLoop() {
    while (!stopping) {
      let found = 0;
      let failed = false;
      try {
        found = await dispatchOnce();
      } catch (error) {
        failed = true;
        log.warn({ err: (error as Error).message }, 'webhook dispatch failed; retrying');
      }
      // A full batch means more is waiting; a failure (database away, schema not migrated yet) backs off.
      if (failed) await dispatchSleep.wait(DISPATCH_RETRY_MS);
      else if (found < limits.dispatchBatch) await dispatchSleep.wait(limits.dispatchPollMs);
    }
  }

  function secretsOf(ctx: AttemptContext): string[] {
    const secrets = [openSecret(settings.secretsKey, ctx.endpointId, ctx.sealedSecret)];
    if (ctx.sealedPreviousSecret) secrets.push(openSecret(settings.secretsKey, ctx.endpointId, ctx.sealedPreviousSecret));
    return secrets;
  }

  async function attempt(ctx: AttemptContext): Promise<AttemptResult> {
    let secrets: string[];
    try {
      secrets = secretsOf(ctx);
    } catch {
      return { succeeded: false, responseStatus: null, responseBody: null, error: 'the signing secret cannot be opened (was SECRET_KEY changed?)', durationMs: 0, startedAt: new Date() };
    }
    const body = envelopeBody(ctx);
    // The receiver may continue the trace (W3C traceparent); the signature covers the body only.
    const post = () => client.post({ url: ctx.url, body, headers: { ...deliveryHeaders(ctx, body, secrets, options.userAgent), ...traceHeaders() } });
    return inSpan('webhook.attempt', { 'webhook.delivery_id': ctx.deliveryId }, async (span) => {
      const result = await post();
      if (result.responseStatus !== null) span.setAttribute('http.response.status_code', result.responseStatus);
      return result;
    }, { kind: SpanKind.CLIENT });
  }

  /** The attempt in a span that starts when its event was recorded: the delivery's lag is the gap before its attempt. */
  function attemptInSpan(job: PgBoss.Job<DeliveryJobData>, ctx: AttemptContext): Promise<AttemptResult> {
    const attributes = { 'webhook.event_id': ctx.eventId, 'webhook.event_type': ctx.eventType, 'webhook.step': job.data.step, 'webhook.trigger': job.data.trigger };
    return inSpan('webhook.delivery', attributes, async (span) => {
      const result = await attempt(ctx);
      span.setAttribute('webhook.succeeded', result.succeeded);
      return result;
    }, { kind: SpanKind.PRODUCER, startTime: ctx.eventCreatedAt.getTime() });
  }

  async function run(job: PgBoss.Job<DeliveryJobData>, ctx: AttemptContext) {
    let result: AttemptResult | undefined;
    try {
      result = await attemptInSpan(job, ctx);
    } finally {
      lanes.finished(ctx.endpointId, result?.durationMs ?? settings.timeoutMs);
    }
    const finishedAt = new Date(result.startedAt.getTime() + result.durationMs);
    const record: AttemptRecord = {
      deliveryId: ctx.deliveryId,
      trigger: job.data.trigger,
      step: job.data.step,
      ...result,
      nextRetryAt: result.succeeded || job.data.trigger === 'replay' ? null : nextRetryAt(job.data.step, finishedAt, settings.retryScheduleMs),
    };
    submit({ kind: 'attempt', job, record });
    const scheduled = job.data.trigger === 'scheduled';
    if (result.succeeded) observer.outcome('delivered', scheduled ? (finishedAt.getTime() - ctx.eventCreatedAt.getTime()) / 1000 : undefined);
    else observer.outcome(!scheduled ? 'replay_failed' : record.nextRetryAt ? 'retry_scheduled' : 'dead');
  }

  function schedule(job: PgBoss.Job<DeliveryJobData>, ctx: AttemptContext) {
    const start = () =>
      void run(job, ctx).catch((error: unknown) => {
        log.error({ err: error, deliveryId: ctx.deliveryId }, 'webhook attempt crashed');
        release(1);
      });
    if (lanes.admit(ctx.endpointId, job, start) === 'full') submit({ kind: 'defer', job });
  }

  async function startJobs(jobs: PgBoss.Job<unknown>[]) {
    const valid: PgBoss.Job<DeliveryJobData>[] = [];
    for (const job of jobs) {
      const data = DeliveryJobData.safeParse(job.data);
      if (data.success) valid.push({ ...job, data: data.data });
      else submit({ kind: 'discard', job });
    }
    let contexts: Map<string, AttemptContext>;
    try {
      contexts = await loadAttemptContexts(pool, valid.map((j) => j.data.deliveryId));
    } catch (error) {
      // The jobs stay active; pg-boss expires and retries them.
      log.warn({ err: (error as Error).message }, 'loading webhook deliveries failed');
      release(valid.length);
      return;
    }
    for (const job of valid) {
      const ctx = contexts.get(job.data.deliveryId);
      const finished = !ctx || ctx.status === 'delivered' || ctx.status === 'dead';
      if (!ctx || (job.data.trigger === 'scheduled' && (finished || ctx.step !== job.data.step))) submit({ kind: 'discard', job });
      else if (!ctx.active) {
        if (job.data.trigger === 'scheduled') observer.outcome('dead');
        submit(job.data.trigger === 'scheduled' ? { kind: 'inactive', job, deliveryId: ctx.deliveryId } : { kind: 'discard', job });
      }
      else schedule(job, ctx);
    }
  }

  async function fetchLoop() {
    while (!stopping) {
      const free = limits.concurrency - held;
      if (free <= 0) {
        await fetchSleep.wait(limits.pollMs);
        continue;
      }
      let jobs: PgBoss.Job<unknown>[] = [];
      try {
        jobs = await boss.fetch(WEBHOOK_DELIVERY_QUEUE, { batchSize: Math.min(free, limits.fetchBatch) });
      } catch (error) {
        log.warn({ err: (error as Error).message }, 'fetching webhook jobs failed');
      }
      if (jobs.length === 0) {
        await fetchSleep.wait(limits.pollMs);
        continue;
      }
      held += jobs.length;
      await startJobs(jobs);
    }
  }

  const loops = Promise.all([dispatchLoop(), fetchLoop()]);
  log.info({ limits }, 'webhook delivery started');

  return {
    wake() {
      dispatchSleep.wake();
      fetchSleep.wake();
    },
    async stop() {
      stopping = true;
      dispatchSleep.wake();
      fetchSleep.wake();
      await loops;
      // Jobs waiting for their endpoint go back to the queue; attempts in flight finish and are recorded. Past the
      // deadline, what is left expires in pg-boss and is retried by another worker (or this one, restarted).
      for (const job of lanes.drain()) submit({ kind: 'defer', job });
      const deadline = Date.now() + settings.timeoutMs + 5_000;
      while (held > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await recorder.drain();
      client.close();
      log.info({ abandoned: held }, 'webhook delivery stopped');
    },
  };
}
