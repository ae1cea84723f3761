// Recurring jobs on pg-boss: each gets its own queue (created at boot), a UTC cron schedule, and a worker in every
// worker process; a queue holds at most one waiting and one running job, so runs never pile up.
import type PgBoss from 'pg-boss';
import type { JobScheduler, RecurringJob } from '../platform/job-scheduler.js';
import type { Logger } from '../platform/logger.js';
import { createQueues } from './job-queue.js';

const RETRIES = { retryLimit: 3, retryDelay: 60, retryBackoff: true } as const;

export function recurringJobQueue(job: Pick<RecurringJob, 'name' | 'expireInSeconds'>): PgBoss.Queue {
  return { name: job.name, policy: 'stately', expireInSeconds: job.expireInSeconds, ...RETRIES };
}

export function createJobScheduler(boss: PgBoss, log: Logger): JobScheduler {
  return {
    async start(job) {
      await createQueues(boss, [recurringJobQueue(job)]);
      await boss.schedule(job.name, job.cron, {}, { tz: 'UTC' });
      await boss.work(job.name, async () => {
        try {
          await job.run();
        } catch (error) {
          log.warn({ err: (error as Error).message, job: job.name }, 'scheduled job failed; pg-boss retries it');
          throw error;
        }
      });
      // Also run soon after boot, as the interval did: a worker that was down catches up now, not at the next tick.
      // A run already waiting makes this a no-op (the queue's stately policy).
      await boss.send(job.name, {});
    },
  };
}
