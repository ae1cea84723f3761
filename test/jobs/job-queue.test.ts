// pg-boss on the service's database: several workers starting at once on a fresh database all get the queue (the
// race to create its partition table is retried), and a job sent to it is stored (pg-boss 10 drops jobs sent to a
// queue that was never created). A stop lets a running job's completion land before the pool is closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJobQueue } from '../../src/jobs/job-queue.js';
import { createPool, type Pool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
const pools: Pool[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const pool of pools) await pool.end().catch(() => undefined);
  await db?.drop();
});

describe('the job queue', () => {
  it('starts in several processes at once on a fresh database and stores the jobs sent to its queues', async () => {
    const log = createLogger('silent');
    const queue = { name: 'race-test', policy: 'standard' as const, retryLimit: 1, expireInSeconds: 5 };
    const queues = await Promise.all(
      Array.from({ length: 6 }, () => {
        const pool = createPool(db.url, { max: 4, log });
        pools.push(pool);
        return startJobQueue(pool, log, { queues: [queue], maintenanceIntervalSeconds: 60 });
      }),
    );
    const bosses = queues.map((q) => q.boss);
    const id = await bosses[0]!.send('race-test', { n: 1 });
    expect(id).toEqual(expect.any(String));
    const [job] = await bosses[1]!.fetch<{ n: number }>('race-test');
    expect(job).toMatchObject({ id, data: { n: 1 } });
    expect(await bosses[2]!.send('never-created', {})).toBeNull();
    for (const q of queues) await q.stop();
  });

  it('lets a job that ends during the stop complete before the pool may close, and refuses what comes after', async () => {
    const log = createLogger('silent');
    const pool = createPool(db.url, { max: 4, log });
    pools.push(pool);
    const queue = await startJobQueue(pool, log, {
      queues: [{ name: 'stop-test', policy: 'standard', retryLimit: 0, expireInSeconds: 60 }],
      maintenanceIntervalSeconds: 60,
    });
    let release = () => {};
    const running = new Promise<void>((started) => {
      void queue.boss.work('stop-test', { pollingIntervalSeconds: 0.5 }, async () => {
        started();
        await new Promise<void>((resolve) => (release = resolve));
      });
    });
    const id = await queue.boss.send('stop-test', {});
    await running;
    const unawaited: unknown[] = [];
    const onRejection = (reason: unknown) => unawaited.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const stopped = queue.stop();
      // The job ends once the stop has begun: pg-boss completes it without awaiting the statement.
      setTimeout(() => release(), 100);
      await stopped;
      await pool.end();
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(unawaited).toEqual([]);
    const { rows } = await db.pool.query<{ state: string }>('SELECT state FROM pgboss.job WHERE id = $1', [id]);
    expect(rows[0]?.state).toBe('completed');
    await expect(queue.boss.send('stop-test', {})).rejects.toThrow(/stopped|not started|end/i);
  });
});
