// Applies schema/NNNN_name.sql in order, each once, in its own transaction, under a session advisory lock.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { schemaDir } from './paths.js';

const MIGRATION_LOCK_KEY = 724_110_001;
const FILE_PATTERN = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface MigrationFile {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrationFiles(dir = schemaDir): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sql')).sort();
  return Promise.all(
    names.map(async (file) => {
      const match = FILE_PATTERN.exec(file);
      if (!match) throw new Error(`schema/${file}: migration names are NNNN_verb_noun.sql`);
      const sql = await readFile(path.join(dir, file), 'utf8');
      return { version: Number(match[1]), name: match[2]!, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

export class MigrationChecksumError extends Error {}

/** Returns the versions applied by this call. Safe when several processes start together. */
export async function migrate(pool: pg.Pool, dir = schemaDir): Promise<number[]> {
  const files = await readMigrationFiles(dir);
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number; checksum: string }>(
      'SELECT version, checksum FROM schema_migrations',
    );
    const done = new Map(rows.map((r) => [r.version, r.checksum]));
    for (const file of files) {
      const checksum = done.get(file.version);
      if (checksum !== undefined) {
        if (checksum !== file.checksum) {
          throw new MigrationChecksumError(`schema/${file.version}_${file.name}.sql changed after it was applied`);
        }
        continue;
      }
      const inTransaction = !file.sql.startsWith('-- migration: no-transaction');
      try {
        if (inTransaction) await client.query('BEGIN');
        await client.query(file.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
          file.version,
          file.name,
          file.checksum,
        ]);
        if (inTransaction) await client.query('COMMIT');
      } catch (error) {
        if (inTransaction) await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${file.version}_${file.name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(file.version);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
  return applied;
}

/** For /ready: how many of the files are applied. */
export async function migrationStatus(db: pg.Pool, files: MigrationFile[]): Promise<{ applied: number; expected: number }> {
  const { rows } = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM schema_migrations');
  return { applied: rows[0]?.count ?? 0, expected: files.length };
}
