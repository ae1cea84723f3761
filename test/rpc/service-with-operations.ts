// A real service (own database, real app on 127.0.0.1) built from a given operation list, handlers and version:
// what the faces are built from, so tests can add operations at test time.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BoundHandler } from '../../src/contract/handler.js';
import { operations } from '../../src/contract/registry.js';
import { createWorkspace } from '../../src/domains/workspaces/index.js';
import { createApiKey } from '../../src/domains/access/index.js';
import { startRedemptionEngine } from '../../src/engine/redemption-engine.js';
import { createApp } from '../../src/http/app.js';
import { createCursorCodec } from '../../src/platform/cursor.js';
import { createLogger } from '../../src/platform/logger.js';
import { packageVersion } from '../../src/platform/paths.js';
import { boundHandlers } from '../../src/transports/handler-registry.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

export interface ServiceWithOperations {
  baseUrl: string;
  db: TestDatabase;
  newKey(scopes?: string[]): Promise<string>;
  close(): Promise<void>;
}

export async function startServiceWithOperations(options: { extra?: BoundHandler[]; version?: string } = {}): Promise<ServiceWithOperations> {
  const db = await createTestDatabase();
  const extra = options.extra ?? [];
  const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const engine = await startRedemptionEngine({
    databaseUrl: db.url,
    db: db.pool,
    partitions: 2,
    cacheSize: 10_000,
    cacheTtlMs: 30_000,
    maxBatch: 500,
    log,
    logLevel: 'silent',
  });
  const app = createApp({
    deps: { db: db.pool, cursors: createCursorCodec(randomBytes(32)), log, engine },
    operations: [...operations, ...extra.map((h) => h.operation)],
    handlers: [...boundHandlers, ...extra],
    version: options.version ?? packageVersion,
    maxBodyBytes: 1_048_576,
    readinessChecks: {},
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    db,
    async newKey(scopes = ['*']) {
      const workspace = await createWorkspace(db.pool, `faces ${randomBytes(3).toString('hex')}`);
      if (scopes.length === 1 && scopes[0] === '*') return workspace.apiKey;
      return (await createApiKey(db.pool, { workspaceId: workspace.id, name: 'faces', scopes })).key;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await engine.stop();
      await db.drop();
    },
  };
}
