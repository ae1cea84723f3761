// Web process composition root: config → database → migrate → app → listen, plus the background worker; graceful stop.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from './config.js';
import { configureStaff, staffSettingsFrom } from './domains/staff/index.js';
import { configureWebhooks, webhookSettingsFrom } from './domains/webhooks/index.js';
import { createLogger } from './platform/logger.js';
import { packageVersion } from './platform/paths.js';
import { resolveSecretKey } from './platform/secret-key.js';
import { createCursors, FIRST_KEY_HINT, openDatabase, prepareDatabase, type OpenDatabase } from './runtime.js';
import { startWebService, type WebService } from './web-service.js';

const WORKER_ENTRY = fileURLToPath(new URL('../workers/background.js', import.meta.url));

/** The whole stop ends within this, drain included: a database going away with us must not hold the process. */
const STOP_LIMIT_MS = 5_000;
const DRAIN_MS = 3_000;

const config = loadConfigOrExit();
const log = createLogger(config.logLevel);

/** What is up so far: a stop (signal, or the embedded database lost for good) may come at any point of the start. */
const running: { database?: OpenDatabase; service?: WebService; worker?: ChildProcess } = {};
let stopping = false;

async function start() {
  const database = await openDatabase(config, log, config.dbPoolSize, {
    onGiveUp: (error) => {
      log.fatal({ err: error.message }, 'the embedded PostgreSQL is gone; exiting so that a process manager can start the service again');
      void stop('embedded database lost', 1);
    },
  });
  running.database = database;
  const prepared = await prepareDatabase(database.pool, config, log);
  if (!prepared.hasApiKeys) process.stdout.write(FIRST_KEY_HINT);
  configureWebhooks(webhookSettingsFrom(config, await resolveSecretKey(config.secretKey, config.dataDir)));
  configureStaff(staffSettingsFrom(config));
  running.service = await startWebService({
    databaseUrl: database.url,
    pool: database.pool,
    log,
    version: packageVersion,
    cursors: await createCursors(config),
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
  });
  log.info({ port: config.port, host: config.host, version: packageVersion, embeddedDatabase: database.embedded }, 'listening');

  if (config.startWorker && !stopping) {
    const worker = fork(WORKER_ENTRY, [], { env: { ...process.env, DATABASE_URL: database.url } });
    worker.on('exit', (code, signal) => {
      if (!stopping) log.error({ code, signal }, 'background worker exited');
    });
    running.worker = worker;
  }
}

/**
 * Worker, HTTP (drained), engine, pools, then the embedded database. A signal sent to the whole process group reaches
 * the worker and PostgreSQL at the same moment, so every step is bounded and the whole stop is capped.
 */
async function stop(cause: string, exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  const { database, service, worker } = running;
  database?.expectStop();
  log.info({ cause }, 'stopping');
  setTimeout(() => {
    log.warn({ limitMs: STOP_LIMIT_MS }, 'stop did not finish in time; exiting without waiting further');
    process.exit(exitCode || 1);
  }, STOP_LIMIT_MS).unref();
  const workerExited = worker && worker.exitCode === null && worker.signalCode === null ? new Promise((r) => worker.once('exit', r)) : undefined;
  worker?.kill('SIGTERM');
  await service?.close({ drainMs: DRAIN_MS });
  await workerExited;
  await database?.close();
  log.info('stopped');
  process.exit(exitCode);
}

process.on('SIGINT', () => void stop('SIGINT', 0));
process.on('SIGTERM', () => void stop('SIGTERM', 0));

start().catch((error: unknown) => {
  if (stopping) return;
  log.fatal({ err: error }, 'failed to start');
  process.exit(1);
});
