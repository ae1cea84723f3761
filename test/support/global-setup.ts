// Once per run: a PostgreSQL (TEST_DATABASE_URL / DATABASE_URL, else an embedded one in a temp dir) and a migrated
// template database that every test file clones.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createLogger } from '../../src/platform/logger.js';
import { startEmbeddedPostgres } from '../../src/platform/embedded-postgres.js';
import { migrate } from '../../src/platform/migrations.js';

declare module 'vitest' {
  export interface ProvidedContext {
    serverUrl: string;
    templateDatabase: string;
    runId: string;
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = '/' + database;
  return u.toString();
}

export default async function setup(project: TestProject) {
  const log = createLogger('warn');
  const external = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
  let dataDir: string | undefined;
  let stopServer = async () => {};
  let serverUrl: string;
  if (external) {
    serverUrl = withDatabase(external, 'postgres');
  } else {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'promotions-test-'));
    const embedded = await startEmbeddedPostgres({ dataDir, log, persistent: false });
    serverUrl = withDatabase(embedded.url, 'postgres');
    stopServer = embedded.stop;
  }
  const runId = randomBytes(4).toString('hex');
  const templateDatabase = `promotions_template_${runId}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${templateDatabase}`);
  const pool = new pg.Pool({ connectionString: withDatabase(serverUrl, templateDatabase), max: 1 });
  await migrate(pool);
  await pool.end();

  project.provide('serverUrl', serverUrl);
  project.provide('templateDatabase', templateDatabase);
  project.provide('runId', runId);

  return async () => {
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $1`,
      [`promotions_%_${runId}%`],
    );
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await admin.end();
    await stopServer();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  };
}
