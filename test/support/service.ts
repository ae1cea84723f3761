// A real service for a test file: its own cloned database, the real express app listening on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { operations } from '../../src/contract/registry.js';
import { ADMIN_SCOPES } from '../../src/contract/scopes.js';
import { RULES_CHANNEL } from '../../src/domains/rules/index.js';
import { listenForNotifications } from '../../src/platform/notifications.js';
import type { RedemptionEngine } from '../../src/contract/engine-port.js';
import { createApiKey, verifyApiKeyCached } from '../../src/domains/access/index.js';
import { startRedemptionEngine } from '../../src/engine/redemption-engine.js';
import { createHotPathDispatcher } from '../../src/http/hot-path-dispatcher.js';
import { createWebServer } from '../../src/http/web-server.js';
import { createWorkspace, ensureDefaultWorkspace } from '../../src/domains/workspaces/index.js';
import { createApp } from '../../src/http/app.js';
import type { ReadinessCheck } from '../../src/http/health.js';
import { databaseCheck, migrationsCheck, partitionsCheck } from '../../src/http/readiness-checks.js';
import { createCursorCodec } from '../../src/platform/cursor.js';
import type { Pool } from '../../src/platform/database.js';
import { createLogger, type Logger } from '../../src/platform/logger.js';
import { readMigrationFiles } from '../../src/platform/migrations.js';
import { packageVersion } from '../../src/platform/paths.js';
import { boundHandlers } from '../../src/transports/handler-registry.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { apiClient, type ApiClient } from './api-client.js';

export interface TestService {
  baseUrl: string;
  db: TestDatabase;
  pool: Pool;
  engine: RedemptionEngine;
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
  /** Use this database instead of a fresh clone (e.g. a second service on the same database). */
  database?: TestDatabase;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const db = options.database ?? (await createTestDatabase());
  const ownDatabase = options.database === undefined;
  const pool = options.pool?.(db) ?? db.pool;
  const files = await readMigrationFiles();
  const log = options.log ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const engine = await startRedemptionEngine({
    databaseUrl: db.url,
    db: pool,
    partitions: options.partitions ?? 2,
    cacheSize: options.engineCacheSize ?? 10_000,
    cacheTtlMs: 30_000,
    maxBatch: 500,
    log,
    logLevel: 'silent',
  });
  const deps = { db: pool, cursors: createCursorCodec(randomBytes(32)), log, engine };
  // As in main.ts: a rule changed through another service on this database reaches this one's partitions.
  const ruleListener = listenForNotifications(db.url, log, { [RULES_CHANNEL]: (workspaceId) => void engine.rulesChanged(workspaceId) });
  const app = createApp({
    deps,
    operations,
    handlers: boundHandlers,
    version: packageVersion,
    maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
    readinessChecks: options.readinessChecks?.(pool) ?? {
      database: databaseCheck(pool),
      migrations: migrationsCheck(pool, files),
      partitions: partitionsCheck(engine),
    },
  });
  const hotPath = options.hotPath === false ? undefined : createHotPathDispatcher({ handlers: boundHandlers, deps, maxBodyBytes: options.maxBodyBytes ?? 1_048_576, verify: verifyApiKeyCached });
  const server: Server = await new Promise((resolve) => {
    const s = createWebServer(app, hotPath);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    db,
    pool,
    engine,
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
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await ruleListener.stop();
      await engine.stop();
      if (pool !== db.pool) await pool.end().catch(() => undefined);
      if (ownDatabase) await db.drop();
    },
  };
}
