// Idempotency keys are kept 7 days (the contract promises at least 24 hours), then pruned by the worker in small
// batches, so the table does not grow without end and no delete holds locks for long.
import type { Sql } from '../../platform/database.js';
import type { Logger } from '../../platform/logger.js';
import { pruneIdempotencyKeys } from './redemption.queries.js';

export const IDEMPOTENCY_KEY_RETENTION_MS = 7 * 86_400_000;
const PRUNE_EVERY_MS = 15 * 60_000;
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

/** Runs the prune at start and every 15 minutes; several workers doing it at once is harmless. */
export function startIdempotencyKeyPruning(db: Sql, log: Logger): { stop(): void } {
  const run = () =>
    pruneExpiredIdempotencyKeys(db).then(
      (n) => n && log.info({ deleted: n }, 'pruned expired idempotency keys'),
      (error: unknown) => log.warn({ err: (error as Error).message }, 'idempotency key pruning failed'),
    );
  void run();
  const timer = setInterval(() => void run(), PRUNE_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
