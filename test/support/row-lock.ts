// A row's lock held from outside the service (its own connection, its own transaction), to show how the service's
// requests wait on it: how many of the database's backends wait on a lock, once they have lined up.
import pg from 'pg';
import { until } from './until.js';

export interface HeldRowLock {
  /** Waits for a first backend waiting on a lock, lets the rest line up (300 ms), then counts them. */
  lockWaitersOnceWaiting(label: string): Promise<number>;
  /** Commits: the lock goes. */
  release(): Promise<void>;
  /** Rolls back if not released, and closes the connection (for `finally`). */
  end(): Promise<void>;
}

/**
 * How many backends of the database `db` reads wait on a lock: all of them, only those of the process ids `only`, or
 * all but those of `except`.
 */
export async function lockWaiters(db: { query: pg.Client['query'] }, pids: { only?: number[]; except?: number[] } = {}): Promise<number> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND ($1::int[] IS NULL OR pid = ANY($1::int[])) AND ($2::int[] IS NULL OR NOT (pid = ANY($2::int[])))`,
    [pids.only ?? null, pids.except ?? null],
  );
  return rows[0].n;
}

/** Locks `table`'s row `id` FOR UPDATE on a connection of its own to `url`, until release(). */
export async function holdRowLock(url: string, table: string, id: string): Promise<HeldRowLock> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  const waiters = () => lockWaiters(holder);
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
  } catch (error) {
    await holder.end();
    throw error;
  }
  return {
    async lockWaitersOnceWaiting(label) {
      await until(async () => (await waiters()) > 0, 10_000, label);
      await new Promise((resolve) => setTimeout(resolve, 300));
      return waiters();
    },
    release: async () => void (await holder.query('COMMIT')),
    async end() {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    },
  };
}
