// Web process composition root: config → database → migrate → app → listen, plus the background worker; graceful stop.
import { fork, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from './config.js';
import { operations } from './contract/registry.js';
import { verifyApiKeyCached, listenForApiKeyChanges } from './domains/access/index.js';
import { RULES_CHANNEL } from './domains/rules/index.js';
import { startRedemptionEngine } from './engine/redemption-engine.js';
import { listenForNotifications } from './platform/notifications.js';
import { createApp } from './http/app.js';
import { createHotPathDispatcher } from './http/hot-path-dispatcher.js';
import { createWebServer } from './http/web-server.js';
import { databaseCheck, migrationsCheck, partitionsCheck, workerCheck } from './http/readiness-checks.js';
import { configureWebhooks, webhookSettingsFrom } from './domains/webhooks/index.js';
import { createLogger } from './platform/logger.js';
import { readMigrationFiles } from './platform/migrations.js';
import { packageVersion } from './platform/paths.js';
import { resolveSecretKey } from './platform/secret-key.js';
import { createCursors, FIRST_KEY_HINT, openDatabase, prepareDatabase } from './runtime.js';
import { assertEveryOperationHandled, boundHandlers } from './transports/handler-registry.js';

const WORKER_ENTRY = fileURLToPath(new URL('../workers/background.js', import.meta.url));

const config = loadConfigOrExit();
const log = createLogger(config.logLevel);

async function start() {
  assertEveryOperationHandled();
  const database = await openDatabase(config, log);
  const prepared = await prepareDatabase(database.pool, config, log);
  if (!prepared.hasApiKeys) process.stdout.write(FIRST_KEY_HINT);
  const cursors = await createCursors(config);
  configureWebhooks(webhookSettingsFrom(config, await resolveSecretKey(config.secretKey, config.dataDir)));
  const migrationFiles = await readMigrationFiles();

  const engine = await startRedemptionEngine({
    databaseUrl: database.url,
    db: database.pool,
    partitions: config.partitions,
    cacheSize: config.engineCacheSize,
    cacheTtlMs: config.engineCacheTtlMs,
    maxBatch: config.engineMaxBatch,
    batchesInFlight: config.engineBatchesInFlight,
    log,
    logLevel: config.logLevel,
  });
  const stopListening = listenForApiKeyChanges(database.url, log);
  // A rule changed in another process: this one's partitions read the workspace's vouchers again.
  const ruleListener = listenForNotifications(database.url, log, { [RULES_CHANNEL]: (workspaceId) => void engine.rulesChanged(workspaceId) });
  const readinessChecks = {
    database: databaseCheck(database.pool),
    partitions: partitionsCheck(engine),
    migrations: migrationsCheck(database.pool, migrationFiles),
    ...(config.startWorker ? { worker: workerCheck(database.pool) } : {}),
  };
  const deps = { db: database.pool, cursors, log, engine };
  const app = createApp({
    deps,
    operations,
    handlers: boundHandlers,
    version: packageVersion,
    maxBodyBytes: config.maxBodyBytes,
    readinessChecks,
  });
  const server: Server = await new Promise((resolve, reject) => {
    const hotPath = config.hotPathDispatcher
      ? createHotPathDispatcher({ handlers: boundHandlers, deps, maxBodyBytes: config.maxBodyBytes, verify: verifyApiKeyCached })
      : undefined;
    const s = createWebServer(app, hotPath);
    s.once('error', reject);
    s.listen(config.port, config.host, () => resolve(s));
  });
  server.keepAliveTimeout = 65_000;
  log.info({ port: config.port, host: config.host, version: packageVersion, embeddedDatabase: database.embedded }, 'listening');

  const worker: ChildProcess | undefined = config.startWorker
    ? fork(WORKER_ENTRY, [], { env: { ...process.env, DATABASE_URL: database.url } })
    : undefined;
  worker?.on('exit', (code, signal) => {
    if (!stopping) log.error({ code, signal }, 'background worker exited');
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const drainTimer = setTimeout(() => server.closeAllConnections(), 10_000);
    const workerExited = worker && worker.exitCode === null ? new Promise((r) => worker.once('exit', r)) : undefined;
    worker?.kill('SIGTERM');
    await closed;
    clearTimeout(drainTimer);
    await workerExited;
    await stopListening();
    await ruleListener.stop();
    await engine.stop();
    await database.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

start().catch((error: unknown) => {
  log.fatal({ err: error }, 'failed to start');
  process.exit(1);
});
