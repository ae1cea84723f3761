// The web process's metrics: requests by operation and status class, refusals by explanation code, the engine (sampled
// from its partition threads at each scrape) and the pools. Label values come from closed sets only.
import type { EngineFigures, PartitionFigureSnapshot } from '../contract/engine-port.js';
import { EXPLANATION_CODES } from '../contract/outcomes.js';
import { addSnapshots, BucketCounts } from '../platform/bucket-counts.js';
import type { Pool } from '../platform/database.js';
import { Counter, Gauge, registerLabeledHistogram, registerSampledCounter, registerSampledHistogram, sharedReading, type Registry } from '../platform/metrics-registry.js';
import { NO_OPERATION, type RequestObserver } from '../transports/request-observer.js';
import { METRIC_PREFIX, registerPoolMetrics } from './process-metrics.js';

/** Faces that answer for no single registry operation: their OpenAPI operation ids. */
const FACE_OPERATIONS = ['rpc.batch', 'rpc.describe', 'mcp.message'];
const REQUEST_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

export interface WebMetricsOptions {
  registry: Registry;
  /** The registry's operation names: any other name is counted as `none`. */
  operations: readonly string[];
  engine: { figures(): Promise<EngineFigures> };
  pool: Pool;
}

/** Registers the web process's metrics; the observer goes to the operation pipeline (every face reports to it). */
export function createWebMetrics(options: WebMetricsOptions): RequestObserver {
  const { registry } = options;
  const known = new Set([...options.operations, ...FACE_OPERATIONS, NO_OPERATION]);
  const codes = new Set<string>(EXPLANATION_CODES);
  // Counts per operation and status class, made at their first request: the hot path only increments one of them.
  const counts = new Map<string, BucketCounts[]>();
  registerLabeledHistogram(registry, {
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: 'Time to answer a request, by operation (registry name, rpc.batch, rpc.describe, mcp.message or none) and status class.',
    sample: () =>
      [...counts].flatMap(([operation, row]) =>
        row.flatMap((c, i) => (c ? [{ labels: { operation, status_class: STATUS_CLASSES[i]! }, snapshot: c.snapshot() }] : [])),
      ),
  });
  const refusals = new Counter({
    name: `${METRIC_PREFIX}refusals_total`,
    help: 'Business refusals answered (200 with ok or valid false), by operation and explanation code; replays not counted again.',
    labelNames: ['operation', 'code'],
    registers: [registry],
  });
  const countsOf = (operation: string, status: number): BucketCounts => {
    let row = counts.get(operation);
    if (!row) {
      if (!known.has(operation)) return countsOf(NO_OPERATION, status);
      counts.set(operation, (row = []));
    }
    const index = status >= 100 && status < 600 ? Math.trunc(status / 100) : 0;
    return (row[index] ??= new BucketCounts(REQUEST_SECONDS_BUCKETS));
  };
  const engine = sharedReading(() => options.engine.figures().catch(() => undefined));
  registerEngineMetrics(registry, engine);
  registerPoolMetrics(registry, {
    web: async () => [options.pool],
    partition: async () => ((await engine())?.partitions ?? []).filter((p): p is PartitionFigureSnapshot => p !== undefined).map((p) => p.pool),
  });
  return {
    answered(operation, status, seconds) {
      countsOf(operation, status).observe(seconds);
    },
    refused(operation, code) {
      refusals.inc({ operation: known.has(operation) ? operation : NO_OPERATION, code: codes.has(code) ? code : 'other' });
    },
  };
}

function registerEngineMetrics(registry: Registry, reading: () => Promise<EngineFigures | undefined>): void {
  const answering = async () => ((await reading())?.partitions ?? []).filter((p): p is PartitionFigureSnapshot => p !== undefined);
  registerSampledHistogram(registry, {
    name: `${METRIC_PREFIX}engine_batch_size`,
    help: 'Requests decided and written together in one commit statement of a partition (group commit).',
    sample: async () => addSnapshots((await answering()).map((p) => p.batchSizes)),
  });
  registerSampledHistogram(registry, {
    name: `${METRIC_PREFIX}engine_commit_duration_seconds`,
    help: 'Time of one commit statement of a partition, from sending it to its COMMIT.',
    sample: async () => addSnapshots((await answering()).map((p) => p.commitSeconds)),
  });
  registerSampledCounter(registry, {
    name: `${METRIC_PREFIX}engine_guard_retries_total`,
    help: 'Commit statements refused by a SQL guard (a stale cache or another writer), after which the batch was decided again.',
    sample: async () => (await answering()).reduce((sum, p) => sum + p.guardRetries, 0),
  });
  const perPartition = (name: string, help: string, value: (p: PartitionFigureSnapshot) => number) =>
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames: ['partition'],
      registers: [registry],
      async collect() {
        const figures = await reading();
        this.reset();
        figures?.partitions.forEach((p, i) => p && this.set({ partition: String(i) }, value(p)));
      },
    });
  perPartition('engine_queue_depth', 'Requests waiting in a partition thread for their batch.', (p) => p.queued);
  perPartition('engine_stack_holds', 'Uses held by a partition for stacks being committed.', (p) => p.holds);
  perPartition('engine_cached_vouchers', 'Vouchers a partition keeps in memory.', (p) => p.cached);
  const fromReading = (name: string, help: string, aggregator: 'sum' | 'max', value: (f: EngineFigures) => number) =>
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      registers: [registry],
      aggregator,
      async collect() {
        const figures = await reading();
        this.set(figures ? value(figures) : 0);
      },
    });
  fromReading('engine_partitions_answering', 'Partition threads that answered within 2 s (fewer than configured: one is stuck or restarting).', 'sum', (f) => f.partitions.filter(Boolean).length);
  fromReading('engine_slots_held', 'Partition slots (of 64) this process leases; summed over the web processes it is 64 when all are owned.', 'sum', (f) => f.slotsHeld);
  fromReading('engine_members', 'Web processes alive on the database, as this process last saw them.', 'max', (f) => f.members);
}
