// pg-boss on the service's own PostgreSQL and pool: its schema is created (or migrated) on start, queues are created
// at boot (in pg-boss 10, sending to a queue that was never created stores nothing), maintenance expires jobs whose
// worker died so they run again, and its clock turns schedules (cron) into jobs.
import PgBoss from 'pg-boss';
import { sqlState, type Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';

export const JOB_SCHEMA = 'pgboss';

/** pg-boss's SQL seam on our pool. Its multi-statement plans carry their own BEGIN: a failure must not leave the
 * pooled connection inside an aborted transaction. */
function poolExecutor(pool: Pool): PgBoss.Db {
  return {
    async executeSql(text, values) {
      const client = await pool.connect();
      try {
        return await client.query(text, values);
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
  };
}

export async function startJobQueue(
  pool: Pool,
  log: Logger,
  options: { queues: readonly PgBoss.Queue[]; maintenanceIntervalSeconds: number },
): Promise<PgBoss> {
  const boss = new PgBoss({
    db: poolExecutor(pool),
    schema: JOB_SCHEMA,
    migrate: true,
    supervise: true,
    // One process per cron tick (pg-boss takes turns through its version row) inserts the scheduled jobs.
    schedule: true,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds,
    // Delivery history lives in our own tables; finished jobs need not linger.
    archiveCompletedAfterSeconds: 3600,
    deleteAfterDays: 1,
  });
  boss.on('error', (error: Error) => log.warn({ err: error.message }, 'job queue error'));
  await boss.start();
  await createQueues(boss, options.queues);
  return boss;
}

export async function createQueues(boss: PgBoss, queues: readonly PgBoss.Queue[]): Promise<void> {
  for (const queue of queues) {
    await retryRaces(() => boss.createQueue(queue.name, queue));
    // createQueue keeps an existing queue's options; settings such as the expiry follow the configuration.
    await retryRaces(() => boss.updateQueue(queue.name, queue));
  }
}

// Workers starting together on a fresh database race to create a queue (its partition table): a deadlock or an
// "already exists" from the loser; trying again finds the queue made.
const RACE_STATES: ReadonlySet<string> = new Set(['40P01', '42P07', '23505']);
const RACE_ATTEMPTS = 5;

async function retryRaces(work: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= RACE_ATTEMPTS || !RACE_STATES.has(sqlState(error) ?? '')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200));
    }
  }
}
