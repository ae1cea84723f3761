import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, rm, writeFile, appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate, MigrationChecksumError, readMigrationFiles } from '../../src/platform/migrations.js';
import { schemaDir } from '../../src/platform/paths.js';

// Installation-wide, not a tenant's: migrations, the worker's heartbeat, and the engine's members, leases and link secret.
const SYSTEM_TABLES = ['schema_migrations', 'worker_heartbeats', 'engine_members', 'engine_secret', 'partition_leases'];
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

  it('applies a file numbered below applied ones: 0029 on a database at 0031 settles money vouchers without a currency', async () => {
    const url = await emptyDatabase();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'schema-'));
    try {
      await cp(schemaDir, dir, { recursive: true });
      await rm(path.join(dir, '0029_require_money_currency.sql'));
      const before = await migrate(pool, dir);
      expect(before).not.toContain(29);
      expect(Math.max(...before)).toBeGreaterThan(29);
      const workspace = async (name: string) =>
        (await pool.query<{ id: string }>('INSERT INTO workspaces (name) VALUES ($1) RETURNING workspace_id AS id', [name])).rows[0]!.id;
      const voucher = async (workspaceId: string, code: string, discount: object, currency: string | null = null, kind = 'CODE') =>
        (await pool.query<{ id: string }>(
          `INSERT INTO vouchers (workspace_id, code, type, kind, discount, currency) VALUES ($1, $2, 'DISCOUNT', $3, $4, $5) RETURNING id`,
          [workspaceId, code, kind, JSON.stringify(discount), currency],
        )).rows[0]!.id;
      const amount = { type: 'AMOUNT', amountOff: 500 };
      const one = await workspace('one currency');
      await voucher(one, 'NAMED', amount, 'EUR');
      await voucher(one, 'PLAIN', amount);
      const redeemed = await voucher(one, 'REDEEMED', amount);
      await pool.query(
        `INSERT INTO redemptions (workspace_id, id, voucher_id, voucher_code, amount, kind, currency, status)
         VALUES ($1, gen_random_uuid(), $2, 'REDEEMED', 500, 'DISCOUNT', 'USD', 'SUCCEEDED')`,
        [one, redeemed],
      );
      const none = await workspace('no currency');
      await voucher(none, 'CAPPED', { type: 'PERCENT', percentOff: 10, amountLimit: 100 });
      await voucher(none, 'SHARE', { type: 'PERCENT', percentOff: 10 });
      await voucher(none, 'tier:x', amount, null, 'TIER');

      expect(await migrate(pool)).toEqual([29]);
      const { rows } = await pool.query('SELECT code, currency, active FROM vouchers ORDER BY code');
      expect(rows).toEqual([
        { code: 'CAPPED', currency: null, active: false },
        { code: 'NAMED', currency: 'EUR', active: true },
        { code: 'PLAIN', currency: 'EUR', active: true },
        { code: 'REDEEMED', currency: 'USD', active: true },
        { code: 'SHARE', currency: null, active: true },
        { code: 'tier:x', currency: null, active: true },
      ]);
      const decisions = await pool.query('SELECT code, action, currency FROM voucher_currency_backfills ORDER BY code');
      expect(decisions.rows).toEqual([
        { code: 'CAPPED', action: 'disabled', currency: null },
        { code: 'PLAIN', action: 'workspace', currency: 'EUR' },
        { code: 'REDEEMED', action: 'redemptions', currency: 'USD' },
      ]);
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
