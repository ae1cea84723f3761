// A real service for a test file: its own cloned database, the real express app listening on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import type { RedemptionEngine } from '../../src/contract/engine-port.js';
import type { BoundHandler } from '../../src/contract/handler.js';
import { ADMIN_SCOPES } from '../../src/contract/scopes.js';
import { createApiKey } from '../../src/domains/access/index.js';
import { createWorkspace, ensureDefaultWorkspace } from '../../src/domains/workspaces/index.js';
import type { ReadinessCheck } from '../../src/http/health.js';
import { createCursorCodec } from '../../src/platform/cursor.js';
import type { Pool } from '../../src/platform/database.js';
import { createLogger, type Logger } from '../../src/platform/logger.js';
import type { Registry } from '../../src/platform/metrics-registry.js';
import { packageVersion } from '../../src/platform/paths.js';
import { createProcessRegistry } from '../../src/telemetry/process-metrics.js';
import { startWebService, type WebService } from '../../src/web-service.js';
import type { RestFace } from '../../src/http/rest-face.js';
import { apiClient, type ApiClient } from './api-client.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { rateLimitsFromEnvironment } from '../../src/config.js';
import { defaultServiceSettings } from '../../src/composition.js';
import type { ServiceSettings } from '../../src/contract/service-settings.js';

export interface TestService {
  baseUrl: string;
  db: TestDatabase;
  pool: Pool;
  engine: RedemptionEngine;
  service: WebService;
  /** The registry /metrics serves, when the service was started with metrics. */
  metricsRegistry: Registry | undefined;
  /** A fresh workspace with a key holding the given scopes (default `*`). */
  newWorkspace(scopes?: string[]): Promise<{ workspaceId: string; key: string; api: ApiClient }>;
  /** A key of the default workspace with `*` and `workspaces:admin`, as the CLI makes. */
  adminApi(): Promise<ApiClient>;
  api(key?: string): ApiClient;
  close(): Promise<void>;
}

export interface TestServiceOptions {
  log?: Logger;
  /** Builds the pool the app uses, e.g. through a proxy that a test can cut. */
  pool?: (db: TestDatabase) => Pool;
  readinessChecks?: (pool: Pool) => Record<string, ReadinessCheck>;
  maxBodyBytes?: number;
  /** Serve the hot routes through the lean dispatcher (default true), or all through express. */
  hotPath?: boolean;
  partitions?: number;
  engineCacheSize?: number;
  /** Partition leases last this long unless renewed (default 5,000 ms). */
  leaseMs?: number;
  /** Use this database instead of a fresh clone (e.g. a second service on the same database). */
  database?: TestDatabase;
  /** Operations beyond the registry's, seen in every face. */
  extraHandlers?: BoundHandler[];
  version?: string;
  /** Serve /metrics (behind `token` when given), as the service does unless METRICS=off. */
  metrics?: { token?: string };
  /** Each request in a server span (a test started tracing first). */
  traced?: boolean;
  /** Default: defaultServiceSettings() (a webhook key of its own, private targets refused, the staff defaults). */
  settings?: ServiceSettings;
}

// One REST face per test process and version (files run one after another in a process): its document is built and
// each route's validator compiled once, not once per file. A service with extra handlers is offered it too and builds
// its own (startWebService uses a face only when it fits the service's operations); only registry faces are kept.
const restFaces = new Map<string, RestFace>();

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const db = options.database ?? (await createTestDatabase());
  const ownDatabase = options.database === undefined;
  const pool = options.pool?.(db) ?? db.pool;
  const log = options.log ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const version = options.version ?? packageVersion;
  const metricsRegistry = options.metrics && createProcessRegistry(version);
  // The same composition as main.ts: API-key cache with its revocation listener, rule listener, engine, faces.
  const service = await startWebService({
    databaseUrl: db.url,
    pool,
    log,
    version,
    restFace: restFaces.get(version),
    cursors: createCursorCodec(randomBytes(32)),
    settings: options.settings ?? defaultServiceSettings(),
    engine: { partitions: options.partitions ?? 2, cacheSize: options.engineCacheSize ?? 10_000, cacheTtlMs: 30_000, maxBatch: 500, logLevel: 'silent', ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}) },
    maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
    hotPath: options.hotPath !== false,
    listen: { port: 0, host: '127.0.0.1' },
    readinessChecks: options.readinessChecks?.(pool),
    extraHandlers: options.extraHandlers ?? [],
    // Tests send bursts of requests without a valid key on purpose (bad input, unknown keys): the per-address limit
    // is generous here unless a test sets RATE_LIMIT_* itself (the rate-limit tests do).
    rateLimits: rateLimitsFromEnvironment({ RATE_LIMIT_PER_ADDRESS: '100000', RATE_LIMIT_BURST_PER_ADDRESS: '100000', ...process.env }),
    metrics: metricsRegistry && { registry: metricsRegistry, token: options.metrics?.token },
    traced: options.traced ?? false,
  });
  if ((options.extraHandlers ?? []).length === 0 && !restFaces.has(version)) restFaces.set(version, service.restFace);
  const baseUrl = service.url;
  const engine = service.engine;
  return {
    baseUrl,
    db,
    pool,
    engine,
    service,
    metricsRegistry,
    async newWorkspace(scopes = ['*']) {
      const workspace = await createWorkspace(db.pool, `test ${randomBytes(3).toString('hex')}`);
      const key = scopes.length === 1 && scopes[0] === '*'
        ? workspace.apiKey
        : (await createApiKey(db.pool, { workspaceId: workspace.id, name: 'test', scopes })).key;
      return { workspaceId: workspace.id, key, api: apiClient(baseUrl, key) };
    },
    async adminApi() {
      const workspace = await ensureDefaultWorkspace(db.pool);
      const key = await createApiKey(db.pool, { workspaceId: workspace.id, name: 'admin', scopes: ADMIN_SCOPES });
      return apiClient(baseUrl, key.key);
    },
    api: (key?: string) => apiClient(baseUrl, key),
    async close() {
      await service.close({ drainMs: 0 });
      if (pool !== db.pool) await pool.end().catch(() => undefined);
      if (ownDatabase) await db.drop();
    },
  };
}
