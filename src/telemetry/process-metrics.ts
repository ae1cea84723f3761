// What every process of the service exposes: its registry (Node's runtime metrics and build info, under the service's
// prefix) and its database pools.
import { createMetricsRegistry, Gauge, sharedReading, type Registry } from '../platform/metrics-registry.js';

export const METRIC_PREFIX = 'promotions_';

export function createProcessRegistry(version: string): Registry {
  return createMetricsRegistry({ prefix: METRIC_PREFIX, version });
}

export type PoolCounts = { totalCount: number; idleCount: number; waitingCount: number } | { total: number; idle: number; waiting: number };

const countsOf = (p: PoolCounts) => ('totalCount' in p ? { total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount } : p);

/** Connections in use and idle, and callers waiting for one, of the process's pools by kind (web, partition, worker). */
export function registerPoolMetrics(registry: Registry, kinds: Record<string, () => Promise<PoolCounts[]>>): void {
  const reading = sharedReading(async () => {
    const totals: Array<{ pool: string; total: number; idle: number; waiting: number }> = [];
    for (const [pool, read] of Object.entries(kinds)) {
      const counts = (await read().catch(() => [])).map(countsOf);
      totals.push(counts.reduce((a, c) => ({ pool, total: a.total + c.total, idle: a.idle + c.idle, waiting: a.waiting + c.waiting }), { pool, total: 0, idle: 0, waiting: 0 }));
    }
    return totals;
  });
  new Gauge({
    name: `${METRIC_PREFIX}db_pool_connections`,
    help: 'Open PostgreSQL connections by pool and state (busy or idle).',
    labelNames: ['pool', 'state'],
    registers: [registry],
    async collect() {
      for (const t of await reading()) {
        this.set({ pool: t.pool, state: 'busy' }, t.total - t.idle);
        this.set({ pool: t.pool, state: 'idle' }, t.idle);
      }
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}db_pool_waiting_clients`,
    help: 'Callers waiting for a PostgreSQL connection, by pool: above 0 for long, the pool is too small or the database slow.',
    labelNames: ['pool'],
    registers: [registry],
    async collect() {
      for (const t of await reading()) this.set({ pool: t.pool }, t.waiting);
    },
  });
}
