// PostgreSQL access: the pool, the one-method `Sql` seam (pool or transaction alike) and withTransaction().
import pg from 'pg';
import type { Logger } from './logger.js';

/**
 * int8 (bigint minor units, counts) arrives as a JS number. Writes keep every stored amount within ±(2^53-1) (the
 * operations check their results; CHECK constraints back them); a value stored past it before those bounds reads as
 * the bound, so no read fails on a stored value (a throw here would fail every list holding the row).
 */
export function int8ToNumber(value: string): number {
  const n = Number(value);
  if (Number.isSafeInteger(n)) return n;
  return n < 0 ? -Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
}

pg.types.setTypeParser(pg.types.builtins.INT8, int8ToNumber);

export type Row = Record<string, unknown>;

export interface Sql {
  query<R extends Row = Row>(text: string, values?: readonly unknown[]): Promise<pg.QueryResult<R>>;
}

export type Pool = pg.Pool;

export function createPool(
  connectionString: string,
  options: { max: number; log: Logger; connectionTimeoutMs?: number; /** server settings, e.g. `-c plan_cache_mode=force_generic_plan` */ options?: string },
): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    ...(options.options ? { options: options.options } : {}),
    max: options.max,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    application_name: 'promotions-service',
  });
  // A client losing its server (restart, pg_terminate_backend, a protocol error) must not crash the process: pg emits
  // 'error' on the client, checked out or idle (then on the pool too); each client logs it once; /ready tells outages.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', (error) => options.log.warn({ err: error.message, code: sqlState(error) }, 'database connection lost'));
  });
  return pool;
}

export async function withTransaction<T>(pool: pg.Pool, work: (tx: Sql) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client as Sql);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** SQLSTATE of a pg error, if it is one. */
export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

export const UNIQUE_VIOLATION = '23505';

const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', '57P01', '57P02', '57P03']);

/** True when PostgreSQL could not be reached or went away: an outage, not a bad request nor a bug. */
export function isConnectionError(error: unknown): boolean {
  const code = sqlState(error);
  if (code && (CONNECTION_ERROR_CODES.has(code) || code.startsWith('08'))) return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error/.test(message);
}

/**
 * A query run as a named prepared statement: parsed and planned once per connection instead of per call. For the
 * hot path's fixed statements only (one name per text).
 */
export function preparedQuery<R extends Row = Row>(db: Sql, name: string, text: string, values: readonly unknown[]): Promise<pg.QueryResult<R>> {
  return (db as unknown as pg.ClientBase).query<R>({ name, text, values: values as unknown[] });
}
