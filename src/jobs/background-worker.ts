// The worker process's runtime: database, heartbeat loop, /health and /metrics, traces when configured, and the pg-boss
// jobs (webhook delivery, loyalty, pruning).
import { randomUUID } from 'node:crypto';
import type { createServer as CreateServer } from 'node:http';
import os from 'node:os';
import type { Config } from '../config.js';
import type { Logger } from '../platform/logger.js';
import { packageVersion } from '../platform/paths.js';
import { compose } from '../composition.js';
import { readOutboxBacklog } from '../domains/events/index.js';
import { isMetricsRequest, localExposition, metricsHandler } from '../platform/metrics-endpoint.js';
import { startTracing } from '../platform/tracing.js';
import { createProcessRegistry } from '../telemetry/process-metrics.js';
import { createWorkerMetrics } from '../telemetry/worker-metrics.js';
import { readQueueDepths } from './queue-depth.queries.js';
import { startBackgroundJobs } from './background-jobs.js';
import { HEARTBEAT_INTERVAL_MS, recordHeartbeat, removeHeartbeat } from './worker-heartbeat.queries.js';

export async function runBackgroundWorker(config: Config, log: Logger, createServer: typeof CreateServer) {
  const tracing = await startTracing(config.tracing);
  const { database, settings } = await compose(config, log, 'worker');
  const registry = config.metrics.enabled ? createProcessRegistry(packageVersion) : undefined;
  const deliveryObserver = registry && createWorkerMetrics({ registry, pool: database.pool, outbox: () => readOutboxBacklog(database.pool), queues: () => readQueueDepths(database.pool) });
  const serveMetrics = registry && metricsHandler({ exposition: localExposition(registry), token: config.metrics.token, log });
  const identity = { id: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, pid: process.pid, host: os.hostname() };
  let healthy = false;
  const beat = async () => {
    try {
      await recordHeartbeat(database.pool, identity);
      healthy = true;
    } catch (error) {
      healthy = false;
      log.warn({ err: (error as Error).message }, 'heartbeat failed');
    }
  };
  const jobs = await startBackgroundJobs({
    pool: database.pool,
    log,
    webhooks: settings.webhooks,
    auditRetentionDays: config.auditRetentionDays,
    eventRetention: { retentionMs: config.eventRetentionMs },
    loyalty: { intervalMs: config.loyaltyJobsIntervalMs },
    deliveryObserver,
  });
  const health = createServer((req, res) => {
    if (serveMetrics && isMetricsRequest(req.url)) return serveMetrics(req, res);
    const ok = req.url === '/health' && healthy;
    res.writeHead(req.url === '/health' ? (ok ? 200 : 503) : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(req.url === '/health' ? { status: ok ? 'ok' : 'degraded', version: packageVersion, workerId: identity.id } : { status: 404 }));
  });
  await new Promise<void>((resolve, reject) => {
    health.once('error', reject);
    health.listen(config.workerHealthPort, config.host, () => resolve());
  });
  // The first heartbeat after the port listens: once the web's /ready counts this worker live, its /health answers
  // (503 until that heartbeat, 200 after it), never a refused connection.
  await beat();
  const timer = setInterval(() => void beat(), HEARTBEAT_INTERVAL_MS);
  log.info({ port: config.workerHealthPort, workerId: identity.id }, 'worker ready');

  return {
    async stop() {
      clearInterval(timer);
      await new Promise<void>((resolve) => health.close(() => resolve()));
      await jobs.stop();
      await removeHeartbeat(database.pool, identity.id).catch(() => undefined);
      await database.close();
      await tracing?.shutdown().catch(() => undefined);
    },
  };
}
