// A process's Prometheus registry: Node's runtime metrics (event-loop delay, GC, heap), build info, and histograms
// sampled from counts kept elsewhere (a worker thread's BucketCounts). The metrics named after the service's parts are
// made in src/telemetry/.
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { BucketSnapshot } from './bucket-counts.js';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export function createMetricsRegistry(options: { prefix: string; version: string }): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  const info = new Gauge({
    name: `${options.prefix}build_info`,
    help: 'Always 1; the labels name the running version and Node.js.',
    labelNames: ['version', 'node_version'],
    registers: [registry],
    aggregator: 'max',
  });
  info.set({ version: options.version, node_version: process.versions.node }, 1);
  return registry;
}

interface SampleValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

function histogramValues(name: string, snapshot: BucketSnapshot | undefined, labels: Record<string, string> = {}): SampleValue[] {
  if (!snapshot) return [];
  const values: SampleValue[] = [];
  let cumulative = 0;
  snapshot.bounds.forEach((bound, i) => {
    cumulative += snapshot.counts[i] ?? 0;
    values.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: `${name}_bucket` });
  });
  values.push({ labels: { ...labels, le: '+Inf' }, value: snapshot.count, metricName: `${name}_bucket` });
  values.push({ labels, value: snapshot.sum, metricName: `${name}_sum` });
  values.push({ labels, value: snapshot.count, metricName: `${name}_count` });
  return values;
}

function registerSampled(registry: Registry, name: string, help: string, type: 'histogram' | 'counter', values: () => Promise<SampleValue[]>): void {
  const read = async () => ({ name, help, type, aggregator: 'sum', values: await values() });
  registry.registerMetric({ name, help, type, aggregator: 'sum', get: read } as never);
}

/**
 * A histogram whose counts are read at each scrape (cumulative counts kept by a worker thread), summed across the
 * processes of a cluster like any other histogram.
 */
export function registerSampledHistogram(registry: Registry, options: { name: string; help: string; sample: () => Promise<BucketSnapshot | undefined> }): void {
  registerSampled(registry, options.name, options.help, 'histogram', async () => histogramValues(options.name, await options.sample()));
}

/** A counter whose value is read at each scrape (a count kept by a worker thread). */
export function registerSampledCounter(registry: Registry, options: { name: string; help: string; sample: () => Promise<number | undefined> }): void {
  registerSampled(registry, options.name, options.help, 'counter', async () => {
    const value = await options.sample();
    return value === undefined ? [] : [{ labels: {}, value, metricName: options.name }];
  });
}

/** One reading shared by every metric of a scrape (they are collected at once): the next call within `ms` reuses it. */
export function sharedReading<T>(read: () => Promise<T>, ms = 1_000): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = performance.now();
    if (!last || now - last.at > ms) last = { at: now, value: read() };
    return last.value;
  };
}
