// Event retention: events older than EVENT_RETENTION go with their webhook deliveries, deleted by the worker every
// hour in batches of at most 1,000 events per statement, so no delete holds locks for long. No other path deletes one.
import type { Sql } from '../../../platform/database.js';
import type { JobScheduler } from '../../../platform/job-scheduler.js';
import type { Logger } from '../../../platform/logger.js';
import { pruneEventBatch, type PrunedEvents } from './event-retention.queries.js';

export const EVENT_RETENTION_QUEUE = 'event-retention';
export const EVENT_RETENTION_BATCH = 1_000;

export interface EventRetention {
  retentionMs: number;
  /** Events per statement (their deliveries go in the same one); default EVENT_RETENTION_BATCH. */
  batchSize?: number | undefined;
}

/** Deletes expired events (and their deliveries) batch after batch until a batch comes back short; the totals. */
export async function pruneExpiredEvents(db: Sql, retention: EventRetention): Promise<PrunedEvents> {
  const batchSize = retention.batchSize ?? EVENT_RETENTION_BATCH;
  const total: PrunedEvents = { events: 0, deliveries: 0 };
  for (;;) {
    const pruned = await pruneEventBatch(db, retention.retentionMs, batchSize);
    total.events += pruned.events;
    total.deliveries += pruned.deliveries;
    if (pruned.events < batchSize) return total;
  }
}

export function startEventRetention(scheduler: JobScheduler, options: { db: Sql; log: Logger } & EventRetention): Promise<void> {
  const { db, log, ...retention } = options;
  return scheduler.start({
    name: EVENT_RETENTION_QUEUE,
    cron: '37 * * * *',
    expireInSeconds: 3_600,
    async run() {
      const pruned = await pruneExpiredEvents(db, retention);
      if (pruned.events) log.info({ ...pruned, retentionMs: retention.retentionMs }, 'pruned expired events and their webhook deliveries');
    },
  });
}
