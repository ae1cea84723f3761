// pg-boss on the service's database: several workers starting at once on a fresh database all get the queue (the
// race to create its partition table is retried), and a job sent to it is stored (pg-boss 10 drops jobs sent to a
// queue that was never created).
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
    const bosses = await Promise.all(
      Array.from({ length: 6 }, () => {
        const pool = createPool(db.url, { max: 4, log });
        pools.push(pool);
        return startJobQueue(pool, log, { queues: [queue], maintenanceIntervalSeconds: 60 });
      }),
    );
    const id = await bosses[0]!.send('race-test', { n: 1 });
    expect(id).toEqual(expect.any(String));
    const [job] = await bosses[1]!.fetch<{ n: number }>('race-test');
    expect(job).toMatchObject({ id, data: { n: 1 } });
    expect(await bosses[2]!.send('never-created', {})).toBeNull();
    for (const boss of bosses) await boss.stop({ graceful: false, close: false });
  });
});
