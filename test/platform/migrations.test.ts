import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, rm, writeFile, appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate, MigrationChecksumError, readMigrationFiles } from '../../src/platform/migrations.js';
import { schemaDir } from '../../src/platform/paths.js';

const SYSTEM_TABLES = ['schema_migrations', 'worker_heartbeats'];
let admin: pg.Client;
const created: string[] = [];

async function emptyDatabase(): Promise<string> {
  const name = `promotions_m${randomBytes(4).toString('hex')}_${inject('runId')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  created.push(name);
  const url = new URL(inject('serverUrl'));
  url.pathname = '/' + name;
  return url.toString();
}

beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject('serverUrl') });
  await admin.connect();
});
afterAll(async () => {
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

describe('migrations', () => {
  it('applies every file once when several processes start together', async () => {
    const url = await emptyDatabase();
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: url, max: 1 }));
    try {
      const results = await Promise.all(pools.map((pool) => migrate(pool)));
      const files = await readMigrationFiles();
      expect(results.flat().sort()).toEqual(files.map((f) => f.version).sort());
      const { rows } = await pools[0]!.query('SELECT version, name, checksum FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(files.map((f) => f.version));
      expect(rows.map((r) => r.checksum)).toEqual(files.map((f) => f.checksum));
      expect(await migrate(pools[0]!)).toEqual([]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('refuses to start when an applied file was changed', async () => {
    const url = await emptyDatabase();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'schema-'));
    try {
      await cp(schemaDir, dir, { recursive: true });
      await migrate(pool, dir);
      const first = (await readdir(dir)).sort()[0]!;
      await appendFile(path.join(dir, first), '\n-- edited after merge\n');
      await expect(migrate(pool, dir)).rejects.toThrow(MigrationChecksumError);
    } finally {
      await pool.end();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rolls a failing file back entirely and does not record it', async () => {
    const url = await emptyDatabase();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'schema-'));
    try {
      await cp(schemaDir, dir, { recursive: true });
      await writeFile(path.join(dir, '9999_break_things.sql'), 'CREATE TABLE half_done (workspace_id uuid);\nSELECT no_such_function();\n');
      await expect(migrate(pool, dir)).rejects.toThrow(/9999_break_things failed/);
      const { rows } = await pool.query(`SELECT to_regclass('half_done') AS t, (SELECT count(*)::int FROM schema_migrations WHERE version = 9999) AS n`);
      expect(rows[0]).toEqual({ t: null, n: 0 });
    } finally {
      await pool.end();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives every business table a workspace_id column', async () => {
    const url = await emptyDatabase();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await migrate(pool);
      const { rows } = await pool.query<{ table_name: string }>(`
        SELECT t.table_name FROM information_schema.tables t
        WHERE t.table_schema = 'public' AND t.table_type = 'BASE TABLE'
          AND NOT EXISTS (SELECT 1 FROM information_schema.columns c
                          WHERE c.table_schema = 'public' AND c.table_name = t.table_name AND c.column_name = 'workspace_id')`);
      expect(rows.map((r) => r.table_name).sort()).toEqual([...SYSTEM_TABLES].sort());
    } finally {
      await pool.end();
    }
  });
});
