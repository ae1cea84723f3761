// Web process composition root: config → database → migrate → app → listen, plus the background worker; graceful stop.
// With WEB_PROCESSES > 1 this process is the primary of a node:cluster: it owns the database (embedded or not), the
// migrations and the background worker, and forks the web processes, which share the port and lease the partitions.
import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from './config.js';
import { compose, type OpenDatabase } from './composition.js';
import { createLogger } from './platform/logger.js';
import { answerClusterScrapes, clusterExposition } from './platform/metrics-endpoint.js';
import { packageVersion } from './platform/paths.js';
import { startTracing, type Tracing } from './platform/tracing.js';
import { FIRST_KEY_HINT, prepareDatabase } from './runtime.js';
import { createProcessRegistry } from './telemetry/process-metrics.js';
import { startWebService, type WebService } from './web-service.js';

const WORKER_ENTRY = fileURLToPath(new URL('../workers/background.js', import.meta.url));

/** The whole stop ends within this, drain included: a database going away with us must not hold the process. */
const STOP_LIMIT_MS = 5_000;
const DRAIN_MS = 3_000;
/** How long a cluster's primary waits for its start in progress to finish before it stops what is up. */
const START_GRACE_MS = 1_500;
/** A background worker that exited (say, its start met a lost connection) is started again after this. */
const WORKER_RESTART_MS = 1_000;

const config = loadConfigOrExit();
const clusterWorker = cluster.isWorker;
const log = createLogger(config.logLevel).child(clusterWorker ? { web: cluster.worker!.id } : {});

/** What is up so far: a stop (signal, or the embedded database lost for good) may come at any point of the start. */
const running: { database?: OpenDatabase; service?: WebService; worker?: ChildProcess; web?: Map<number, ClusterWorker>; tracing?: Tracing | undefined } = {};
let stopping = false;
/** Aborted by a stop: a web process's start then stops what it has started (its partition leases given up) and rejects. */
const startAbort = new AbortController();
const isPrimary = cluster.isPrimary && config.webProcesses > 1;

/** An embedded PostgreSQL that is gone for good stops the service: a process manager can then start it again. */
const supervision = {
  onGiveUp: (error: Error) => {
    log.fatal({ err: error.message }, 'the embedded PostgreSQL is gone; exiting so that a process manager can start the service again');
    void stop('embedded database lost', 1);
  },
};

/** The primary of WEB_PROCESSES web processes: database, migrations, background worker; a web process restarted if it dies. */
async function startPrimary() {
  // The secret key is made once here (a file under DATA_DIR when SECRET_KEY is unset), then read by every web process.
  const { database, settings } = await compose(config, log, 'primary', { supervision });
  running.database = database;
  const prepared = await prepareDatabase(database.pool, config, log, settings);
  if (!prepared.hasApiKeys) process.stdout.write(FIRST_KEY_HINT);
  // START_WORKER passes through: a web process never starts the worker (the primary does), but checks it in /ready.
  const env = { DATABASE_URL: database.url, PARTITIONS: String(config.partitions) };
  const web = new Map<number, ClusterWorker>();
  running.web = web;
  // A scrape of any web process is answered with the sum over all of them, gathered here.
  if (config.metrics.enabled) answerClusterScrapes(log);
  const forkWeb = () => {
    const w = cluster.fork(env);
    web.set(w.id, w);
    w.on('exit', (code, signal) => {
      web.delete(w.id);
      if (stopping) return;
      log.error({ code, signal, web: w.id }, 'a web process exited; starting another');
      setTimeout(() => !stopping && forkWeb(), 500).unref();
    });
    return w;
  };
  await Promise.all(Array.from({ length: config.webProcesses }, () => new Promise((resolve) => forkWeb().once('listening', resolve))));
  log.info({ port: config.port, host: config.host, version: packageVersion, webProcesses: config.webProcesses, embeddedDatabase: database.embedded }, 'listening');
  startBackgroundWorker(database.url);
}

/**
 * The background worker, started again whenever it exits unless the service is stopping: after WORKER_RESTART_MS,
 * doubled (up to 30 s) while it keeps exiting within a minute of its start.
 */
function startBackgroundWorker(databaseUrl: string, delayMs = WORKER_RESTART_MS) {
  if (!config.startWorker || stopping) return;
  const startedAt = Date.now();
  const worker = fork(WORKER_ENTRY, [], { env: { ...process.env, DATABASE_URL: databaseUrl } });
  worker.on('exit', (code, signal) => {
    if (stopping) return;
    const next = Date.now() - startedAt > 60_000 ? WORKER_RESTART_MS : Math.min(delayMs * 2, 30_000);
    log.error({ code, signal, restartInMs: delayMs }, 'background worker exited; starting another');
    setTimeout(() => startBackgroundWorker(databaseUrl, next), delayMs).unref();
  });
  running.worker = worker;
}

async function start() {
  const { signal } = startAbort;
  const { database, settings, cursors } = await compose(config, log, 'web', { supervision });
  running.database = database;
  signal.throwIfAborted();
  // A cluster's web process finds the database prepared by its primary.
  if (!clusterWorker) {
    const prepared = await prepareDatabase(database.pool, config, log, settings);
    if (!prepared.hasApiKeys) process.stdout.write(FIRST_KEY_HINT);
    signal.throwIfAborted();
  }
  running.tracing = await startTracing(config.tracing);
  const registry = config.metrics.enabled ? createProcessRegistry(packageVersion) : undefined;
  running.service = await startWebService({
    databaseUrl: database.url,
    pool: database.pool,
    log,
    version: packageVersion,
    cursors,
    settings,
    rateLimits: config.rateLimits,
    engine: {
      partitions: config.partitions,
      cacheSize: config.engineCacheSize,
      cacheTtlMs: config.engineCacheTtlMs,
      maxBatch: config.engineMaxBatch,
      batchesInFlight: config.engineBatchesInFlight,
      insightsRollup: config.insightsRollup,
      logLevel: config.logLevel,
      leaseMs: config.partitionLeaseMs,
      link: config.engineLink,
    },
    maxBodyBytes: config.maxBodyBytes,
    importMaxBytes: config.importMaxBytes,
    hotPath: config.hotPathDispatcher,
    listen: { port: config.port, host: config.host },
    workerCheck: config.startWorker,
    metrics: registry && { registry, token: config.metrics.token, ...(clusterWorker ? { exposition: clusterExposition(registry) } : {}) },
    traced: running.tracing !== undefined,
    signal,
  });
  if (clusterWorker) return;
  log.info({ port: config.port, host: config.host, version: packageVersion, embeddedDatabase: database.embedded }, 'listening');
  startBackgroundWorker(database.url);
}

/**
 * Worker, HTTP (drained), engine, pools, then the embedded database. A signal sent to the whole process group reaches
 * the worker and PostgreSQL at the same moment, so every step is bounded and the whole stop is capped.
 */
async function stop(cause: string, exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  running.database?.expectStop();
  log.info({ cause }, 'stopping');
  const stopBy = Date.now() + STOP_LIMIT_MS;
  setTimeout(() => {
    log.warn({ limitMs: STOP_LIMIT_MS }, 'stop did not finish in time; exiting without waiting further');
    process.exit(exitCode || 1);
  }, STOP_LIMIT_MS).unref();
  // A stop in the middle of the start: a web process's start is aborted and stops what it has started (the engine gives
  // its partition leases up), waited for up to a second short of the stop's limit; a primary's start is waited for
  // (bounded), so that what it started is stopped properly rather than left to expire.
  startAbort.abort(new Error('stopped during the start'));
  const startWaitMs = isPrimary ? START_GRACE_MS : Math.max(0, stopBy - Date.now() - 1_000);
  await Promise.race([starting.catch(() => undefined), new Promise((r) => setTimeout(r, startWaitMs).unref())]);
  const { database, service, worker, web } = running;
  database?.expectStop();
  const workerExited = worker && worker.exitCode === null && worker.signalCode === null ? new Promise((r) => worker.once('exit', r)) : undefined;
  worker?.kill('SIGTERM');
  // A cluster's web processes stop first (each drains and gives its leases up), then the database they use.
  const webExited = [...(web?.values() ?? [])].map((w) => new Promise((r) => (w.isDead() ? r(null) : w.once('exit', r))));
  for (const w of web?.values() ?? []) w.process.kill('SIGTERM');
  await service?.close({ drainMs: Math.max(0, Math.min(DRAIN_MS, stopBy - Date.now() - 1_000)) });
  await running.tracing?.shutdown().catch(() => undefined);
  await Promise.all([workerExited, ...webExited]);
  await database?.close();
  log.info('stopped');
  process.exit(exitCode);
}

process.on('SIGINT', () => void stop('SIGINT', 0));
process.on('SIGTERM', () => void stop('SIGTERM', 0));

// A web process whose primary is gone (killed) stops too: nothing would restart it, and its port is the primary's.
if (clusterWorker) process.on('disconnect', () => void stop('cluster primary gone', 1));

const starting = isPrimary ? startPrimary() : start();
starting.catch((error: unknown) => {
  if (stopping) return;
  log.fatal({ err: error }, 'failed to start');
  process.exit(1);
});
