// A fresh database per test file, cloned from the migrated template (fast, isolated, real PostgreSQL).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createPool, type Pool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';

export interface TestDatabase {
  url: string;
  name: string;
  pool: Pool;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = '/' + database;
  return u.toString();
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = inject('serverUrl');
  const name = `promotions_t${randomBytes(4).toString('hex')}_${inject('runId')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(serverUrl, name);
  const pool = createPool(url, { max: 10, log: createLogger('silent') });
  return {
    url,
    name,
    pool,
    async drop() {
      await pool.end().catch(() => undefined);
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await client.end();
    },
  };
}
