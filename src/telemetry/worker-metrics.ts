// The worker process's metrics: webhook deliveries by status and their lag, the outbox's backlog and its oldest age,
// the job queues' depths and the worker's pool (read from the database at each scrape, shared by the metrics of it).
import type { DeliveryObserver, DeliveryOutcome } from '../domains/webhooks/index.js';
import type { Pool } from '../platform/database.js';
import { Counter, Gauge, Histogram, sharedReading, type Registry } from '../platform/metrics-registry.js';
import { METRIC_PREFIX, registerPoolMetrics } from './process-metrics.js';

const LAG_SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400];
const OUTCOMES: readonly DeliveryOutcome[] = ['delivered', 'retry_scheduled', 'dead', 'replay_failed'];

export interface WorkerMetricsOptions {
  registry: Registry;
  pool: Pool;
  outbox: () => Promise<{ events: number; oldestAgeSeconds: number }>;
  queues: () => Promise<Array<{ queue: string; due: number; scheduled: number }>>;
}

/** Registers the worker's metrics; the observer goes to the webhook delivery pipeline. */
export function createWorkerMetrics(options: WorkerMetricsOptions): DeliveryObserver {
  const { registry } = options;
  const deliveries = new Counter({
    name: `${METRIC_PREFIX}webhook_deliveries_total`,
    help: 'Webhook attempts by the status they left their delivery in: delivered, retry_scheduled, dead (retries used up, or the endpoint inactive), replay_failed.',
    labelNames: ['status'],
    registers: [registry],
  });
  // Every status shows from the start (at 0), so rates and alerts need no absent() guard.
  for (const status of OUTCOMES) deliveries.inc({ status }, 0);
  const lag = new Histogram({
    name: `${METRIC_PREFIX}webhook_delivery_lag_seconds`,
    help: 'From an event\'s recording (its transaction) to its webhook\'s successful delivery, retries included.',
    buckets: LAG_SECONDS_BUCKETS,
    registers: [registry],
  });
  const outbox = sharedReading(() => options.outbox().catch(() => undefined));
  new Gauge({
    name: `${METRIC_PREFIX}outbox_backlog_events`,
    help: 'Events committed but not yet turned into webhook deliveries.',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const read = await outbox();
      if (read) this.set(read.events);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}outbox_oldest_age_seconds`,
    help: 'Age of the oldest event not yet turned into deliveries (0 when none waits).',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const read = await outbox();
      if (read) this.set(read.oldestAgeSeconds);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}job_queue_depth`,
    help: 'Jobs waiting in each pg-boss queue: due now (backlog) or scheduled later (retries at their time).',
    labelNames: ['queue', 'state'],
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const depths = await options.queues().catch(() => undefined);
      if (!depths) return;
      this.reset();
      for (const d of depths) {
        this.set({ queue: d.queue, state: 'due' }, d.due);
        this.set({ queue: d.queue, state: 'scheduled' }, d.scheduled);
      }
    },
  });
  registerPoolMetrics(registry, { worker: async () => [options.pool] });
  return {
    outcome(outcome, lagSeconds) {
      deliveries.inc({ status: outcome });
      if (lagSeconds !== undefined) lag.observe(Math.max(0, lagSeconds));
    },
  };
}
