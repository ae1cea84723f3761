// Idempotency keys are kept 7 days (the contract promises at least 24 hours), then pruned by the worker every 15
// minutes in batches of 5,000 rows per statement, so the table does not grow without end and no delete holds locks
// for long.
import type { Sql } from '../../platform/database.js';
import type { JobScheduler } from '../../platform/job-scheduler.js';
import type { Logger } from '../../platform/logger.js';
import { pruneIdempotencyKeys } from '../../platform/idempotency-keys.sql.js';

export const IDEMPOTENCY_KEY_RETENTION_MS = 7 * 86_400_000;
export const IDEMPOTENCY_KEY_PRUNING_QUEUE = 'idempotency-key-pruning';
const BATCH = 5_000;

/** Deletes expired keys until none is left; returns how many went. */
export async function pruneExpiredIdempotencyKeys(db: Sql, retentionMs = IDEMPOTENCY_KEY_RETENTION_MS): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await pruneIdempotencyKeys(db, retentionMs, BATCH);
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

export function startIdempotencyKeyPruning(scheduler: JobScheduler, db: Sql, log: Logger): Promise<void> {
  return scheduler.start({
    name: IDEMPOTENCY_KEY_PRUNING_QUEUE,
    cron: '*/15 * * * *',
    expireInSeconds: 900,
    async run() {
      const deleted = await pruneExpiredIdempotencyKeys(db);
      if (deleted) log.info({ deleted }, 'pruned expired idempotency keys');
    },
  });
}
