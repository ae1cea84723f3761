// The seam between a recurring job and the job queue: a domain says what runs and how often; jobs/ runs it on
// pg-boss in one worker process at a time, soon after boot and then on its cron.
export interface RecurringJob {
  /** The job's queue, e.g. `audit-retention`. */
  name: string;
  /** Five-field cron expression, in UTC. */
  cron: string;
  /** A run not finished within this counts as lost (its worker died) and runs again. */
  expireInSeconds: number;
  run(): Promise<void>;
}

export interface JobScheduler {
  /** Creates the job's queue, schedules it and works it in this process. */
  start(job: RecurringJob): Promise<void>;
}
