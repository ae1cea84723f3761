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

/** Locks `table`'s row `id` FOR UPDATE on a connection of its own to `url`, until release(). */
export async function holdRowLock(url: string, table: string, id: string): Promise<HeldRowLock> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  const waiters = async () =>
    Number((await holder.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n);
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
