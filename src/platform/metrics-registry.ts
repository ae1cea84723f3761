// A process's Prometheus registry: Node's runtime metrics (event-loop delay, GC, heap), build info, and histograms and
// counters sampled at each scrape from counts kept elsewhere (a worker thread's BucketCounts).
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { BucketSnapshot } from './bucket-counts.js';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export function createMetricsRegistry(options: { prefix: string; version: string }): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  // Gauges named like counters, which promtool's lint refuses; what they count is of little use to an operator.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
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

/**
 * A histogram with labels whose counts are kept by the caller in BucketCounts (one increment an observation, nothing
 * allocated: for a request path), read at each scrape.
 */
export function registerLabeledHistogram(registry: Registry, options: { name: string; help: string; sample: () => Array<{ labels: Record<string, string>; snapshot: BucketSnapshot }> }): void {
  registerSampled(registry, options.name, options.help, 'histogram', async () => options.sample().flatMap((s) => histogramValues(options.name, s.snapshot, s.labels)));
}

/** A counter whose value is read at each scrape (a count kept by a worker thread). */
export function registerSampledCounter(registry: Registry, options: { name: string; help: string; sample: () => Promise<number | undefined> }): void {
  registerSampled(registry, options.name, options.help, 'counter', async () => {
    const value = await options.sample();
    return value === undefined ? [] : [{ labels: {}, value, metricName: options.name }];
  });
}

/**
 * One reading shared by the metrics of a scrape: a registry asks every metric at once, so they all get the reading in
 * flight; the next scrape reads again.
 */
export function sharedReading<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  return () => {
    if (!inFlight) {
      const reading = read();
      inFlight = reading;
      const clear = () => setImmediate(() => inFlight === reading && (inFlight = undefined));
      reading.then(clear, clear);
    }
    return inFlight;
  };
}
