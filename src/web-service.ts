// The web service's composition, the one place that wires it (main.ts and the tests both call it): engine, API-key
// verifier and its revocation listener, rule listener, operation pipeline with its authenticators, express app,
// hot-path dispatcher, HTTP server, readiness checks, metrics and request spans; and the order in which they stop.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Authenticator } from './contract/actor.js';
import type { RedemptionEngine } from './contract/engine-port.js';
import type { BoundHandler } from './contract/handler.js';
import type { ServiceSettings } from './contract/service-settings.js';
import { secretFieldNames } from './contract/secrets.js';
import { ZoneCalendar } from './contract/zone-calendar.js';
import { ApiKeyVerifier, apiKeyAuthenticator, RequestRateLimiter, type RateLimitSettings } from './domains/access/index.js';
import { rateLimitsFromEnvironment } from './config.js';
import { RULES_CHANNEL } from './domains/rules/index.js';
import { serviceDeps } from './composition.js';
import { ownOrigins, staffSessionAuthenticator } from './domains/staff/index.js';
import { startRedemptionEngine, type EngineOptions } from './engine/redemption-engine.js';
import { createApp } from './http/app.js';
import type { ReadinessCheck } from './http/health.js';
import { databaseCheck, migrationsCheck, partitionsCheck, workerCheck } from './http/readiness-checks.js';
import { buildRestFace, restFaceFits, type RestFace } from './http/rest-face.js';
import type { CursorCodec } from './platform/cursor.js';
import type { Pool } from './platform/database.js';
import type { Logger } from './platform/logger.js';
import { localExposition, metricsHandler, type MetricsExposition } from './platform/metrics-endpoint.js';
import type { Registry } from './platform/metrics-registry.js';
import { traceRequests } from './platform/tracing.js';
import { readMigrationFiles } from './platform/migrations.js';
import { listenForNotifications, type Listener } from './platform/notifications.js';
import { OperationPipeline } from './transports/execute-operation.js';
import { assertEveryOperationHandled, boundHandlers } from './transports/handler-registry.js';
import { createHotPathDispatcher } from './transports/hot-path.js';
import { createWebMetrics } from './telemetry/web-metrics.js';

export interface WebServiceOptions {
  databaseUrl: string;
  /** The pool handlers and the app use (a test may hand one that goes through a proxy it can cut). */
  pool: Pool;
  log: Logger;
  version: string;
  cursors: CursorCodec;
  /** What handlers read of the configuration (composition.ts: serviceSettingsFrom, or defaults in a test). */
  settings: ServiceSettings;
  engine: Omit<EngineOptions, 'databaseUrl' | 'db' | 'log' | 'calendar' | 'signal'>;
  /**
   * A stop that comes during the start (main.ts): the start stops what it has started (the engine gives its partition
   * leases up) and rejects with the signal's reason, instead of leaving leases to expire.
   */
  signal?: AbortSignal | undefined;
  maxBodyBytes: number;
  /** Serve the hot routes through the lean dispatcher too (default), or all through express. */
  hotPath: boolean;
  listen: { port: number; host: string };
  /** Replaces the default readiness checks (database, migrations, partitions, and worker when `workerCheck`). */
  readinessChecks?: Record<string, ReadinessCheck> | undefined;
  workerCheck?: boolean;
  /** Operations beyond the registry's (tests add throwaway ones to see them in every face). */
  extraHandlers?: readonly BoundHandler[];
  /** More authenticators after the API key (the staff session cookie plugs in here). */
  authenticators?: readonly Authenticator[];
  /** Token buckets per key and per client address; default: the RATE_LIMIT_* environment (config.ts). */
  rateLimits?: RateLimitSettings | undefined;
  /** The largest streamed import body (CSV / NDJSON); default IMPORT_MAX_BYTES's default. */
  importMaxBytes?: number | undefined;
  /**
   * Metrics in this registry, served at GET /metrics (behind `token` when set); `exposition` answers a scrape (default:
   * this registry; in a cluster, every web process's). Absent: no metrics, nothing measured.
   */
  metrics?: { registry: Registry; token?: string | undefined; exposition?: MetricsExposition } | undefined;
  /** Each request in a server span (tracing was started: platform/tracing.ts). */
  traced?: boolean;
  /** A REST face (document and request validation) built before, used when it fits these handlers and version. */
  restFace?: RestFace | undefined;
}

/** Time for one whole request, upload included: a bulk import of a few hundred MB streams for minutes. */
const REQUEST_TIMEOUT_MS = 30 * 60_000;

export interface WebService {
  server: Server;
  url: string;
  engine: RedemptionEngine;
  pipeline: OperationPipeline;
  /** The settings its handlers read (a test may replace a field to change its own service's policy). */
  settings: ServiceSettings;
  /** Its REST face: another service of the same handlers and version may be given it (WebServiceOptions.restFace). */
  restFace: RestFace;
  /** Stops accepting, drains open requests for up to `drainMs`, then stops listeners and the engine (not the pool). */
  close(options?: { drainMs?: number }): Promise<void>;
}

/** Waits (bounded) for the listeners to be in force, so the key cache serves from the first request. */
async function untilListening(listeners: Listener[], timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (listeners.some((l) => !l.listening) && Date.now() < until && !signal?.aborted) await new Promise((r) => setTimeout(r, 10));
}

export async function startWebService(options: WebServiceOptions): Promise<WebService> {
  const handlers = [...boundHandlers, ...(options.extraHandlers ?? [])];
  assertEveryOperationHandled(boundHandlers);
  const { pool, log, metrics } = options;
  // One calendar for the web thread: the engine's stack and tier decisions and the handlers share its memos.
  const calendar = new ZoneCalendar();
  // A face built before serves when it was built for these very operations and version; otherwise one is built here,
  // before the engine takes its partition leases: its few hundred ms of CPU would otherwise hold the first renewals.
  const operations = handlers.map((h) => h.operation);
  const given = options.restFace;
  const restFace = given && restFaceFits(given, operations, options.version) ? given : buildRestFace(operations, options.version);
  const { signal } = options;
  const engine = await startRedemptionEngine({ ...options.engine, databaseUrl: options.databaseUrl, db: pool, log, calendar, signal });
  const verifier = new ApiKeyVerifier(pool, log);
  const keyListener = verifier.listen(options.databaseUrl);
  // A rule changed in another process: this one's partitions read the workspace's vouchers again.
  const ruleListener = listenForNotifications(options.databaseUrl, log, { [RULES_CHANNEL]: (workspaceId) => void engine.rulesChanged(workspaceId) });

  await untilListening([keyListener, ruleListener], 2_000, signal);

  const deps = serviceDeps({ db: pool, cursors: options.cursors, log, engine, settings: options.settings, calendar, forgetApiKeys: () => verifier.forget() });
  // The session cookie, asked after the API key (a Bearer key wins); its writes must come from the service's origin.
  let listeningPort: number | undefined;
  const staffSession = staffSessionAuthenticator(pool, log, () => deps.settings.staff, () => ownOrigins(deps.settings.staff, listeningPort));
  const pipeline = new OperationPipeline({
    handlers,
    deps,
    authenticators: [apiKeyAuthenticator(verifier), staffSession, ...(options.authenticators ?? [])],
    secretFields: secretFieldNames(handlers.flatMap((h) => [h.operation.body, h.operation.output])),
    rateLimits: new RequestRateLimiter(verifier, options.rateLimits ?? rateLimitsFromEnvironment()),
    observer: metrics && createWebMetrics({ registry: metrics.registry, operations: handlers.map((h) => h.operation.name), engine, pool }),
  });
  const metricsRoute = metrics && metricsHandler({ exposition: metrics.exposition ?? localExposition(metrics.registry), token: metrics.token, log });
  const readinessChecks = options.readinessChecks ?? {
    database: databaseCheck(pool),
    partitions: partitionsCheck(engine),
    migrations: migrationsCheck(pool, await readMigrationFiles()),
    ...(options.workerCheck ? { worker: workerCheck(pool) } : {}),
  };
  const app = createApp({ pipeline, log, version: options.version, maxBodyBytes: options.maxBodyBytes, importMaxBytes: options.importMaxBytes, readinessChecks, metrics: metricsRoute, restFace });
  const hotPath = options.hotPath ? createHotPathDispatcher({ pipeline, maxBodyBytes: options.maxBodyBytes }) : undefined;
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    if (hotPath?.(req, res)) return;
    app(req, res);
  };
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS }, options.traced ? traceRequests(serve) : serve);
  try {
    signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.listen.port, options.listen.host, () => resolve());
    });
  } catch (error) {
    await Promise.all([keyListener.stop(), ruleListener.stop(), engine.stop()]);
    throw error;
  }
  server.keepAliveTimeout = 65_000;
  const address = server.address() as AddressInfo;
  listeningPort = address.port;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    server,
    url: `http://${host}:${address.port}`,
    engine,
    pipeline,
    settings: deps.settings,
    restFace,
    async close({ drainMs = 10_000 } = {}) {
      // A request still arriving on a kept-alive connection is answered with `Connection: close`, so the drain ends
      // when the requests in flight do, not when the clients stop sending.
      server.prependListener('request', (_req, res) => void (res.shouldKeepAlive = false));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const drainTimer = setTimeout(() => server.closeAllConnections(), drainMs);
      await closed;
      clearTimeout(drainTimer);
      await keyListener.stop();
      await ruleListener.stop();
      await engine.stop();
    },
  };
}
