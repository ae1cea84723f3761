// Audit retention: entries older than AUDIT_RETENTION_DAYS are deleted by the worker every hour, oldest first, in
// batches of 5,000 rows per statement, so no delete holds locks for long. No other path deletes an entry.
import type { Sql } from '../../platform/database.js';
import type { JobScheduler } from '../../platform/job-scheduler.js';
import type { Logger } from '../../platform/logger.js';
import { pruneAuditEntries } from './audit-entry.queries.js';

export const AUDIT_RETENTION_QUEUE = 'audit-retention';
const BATCH = 5_000;

/** Deletes entries older than `retentionDays` until none is left; returns how many went. */
export async function pruneExpiredAuditEntries(db: Sql, retentionDays: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await pruneAuditEntries(db, retentionDays, BATCH);
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

export function startAuditRetention(scheduler: JobScheduler, options: { db: Sql; log: Logger; retentionDays: number }): Promise<void> {
  const { db, log, retentionDays } = options;
  return scheduler.start({
    name: AUDIT_RETENTION_QUEUE,
    cron: '7 * * * *',
    expireInSeconds: 3_600,
    async run() {
      const deleted = await pruneExpiredAuditEntries(db, retentionDays);
      if (deleted) log.info({ deleted, retentionDays }, 'pruned expired audit entries');
    },
  });
}
