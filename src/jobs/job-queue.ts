// pg-boss on the service's own PostgreSQL and pool: its schema is created (or migrated) on start, queues are created
// at boot (in pg-boss 10, sending to a queue that was never created stores nothing), maintenance expires jobs whose
// worker died so they run again, and its clock turns schedules (cron) into jobs.
import PgBoss from 'pg-boss';
import { sqlState, type Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';

export const JOB_SCHEMA = 'pgboss';

/** Raised by the job queue's SQL seam once its stop has begun: what pg-boss still sends then (a completion it does not
 * await, a fetch that was already on its way) is refused, and the job it concerns runs again after its expiry. */
export class JobQueueStoppedError extends Error {
  constructor() {
    super('the job queue has stopped');
    this.name = 'JobQueueStoppedError';
  }
}

/** pg-boss's SQL seam on our pool. Its multi-statement plans carry their own BEGIN: a failure must not leave the
 * pooled connection inside an aborted transaction. It counts the statements under way, so that a stop can let them
 * end before the pool is closed (pg-boss completes a job without awaiting it: a completion sent as the pool ends would
 * reject with no one to catch it). */
class PoolExecutor implements PgBoss.Db {
  readonly #underWay = new Set<Promise<unknown>>();
  #stopped = false;

  constructor(private readonly pool: Pool) {}

  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
    if (this.#stopped) return Promise.reject(new JobQueueStoppedError());
    const statement = this.#run(text, values);
    this.#underWay.add(statement);
    const settled = () => this.#underWay.delete(statement);
    statement.then(settled, settled);
    return statement;
  }

  /** Refuses what comes after, and waits (at most limitMs) for what is under way. */
  async stop(limitMs: number): Promise<void> {
    this.#stopped = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.#underWay]),
      new Promise((resolve) => (timer = setTimeout(resolve, limitMs))),
    ]);
    clearTimeout(timer);
  }

  async #run(text: string, values?: unknown[]) {
    const client = await this.pool.connect();
    try {
      return await client.query(text, values);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

export interface JobQueue {
  readonly boss: PgBoss;
  /** Stops pg-boss's workers and waits for the jobs they run and the statements under way (bounded: about
   * STOP_WAIT_MS twice); the pool stays open, and may be closed once this resolves. */
  stop(): Promise<void>;
}

/** How long a stop waits for running scheduled jobs, then for pg-boss's statements under way (each). pg-boss's own
 * least is one second. */
const STOP_WAIT_MS = 1_000;

export async function startJobQueue(
  pool: Pool,
  log: Logger,
  options: { queues: readonly PgBoss.Queue[]; maintenanceIntervalSeconds: number },
): Promise<JobQueue> {
  const executor = new PoolExecutor(pool);
  const boss = new PgBoss({
    db: executor,
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
  return {
    boss,
    async stop() {
      // Graceful: pg-boss waits for its workers' jobs to end (at most the timeout), then fails what still runs.
      await boss.stop({ graceful: true, wait: true, timeout: STOP_WAIT_MS, close: false });
      await executor.stop(STOP_WAIT_MS);
    },
  };
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
