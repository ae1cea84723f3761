// Group commit of attempt outcomes: one transaction records a batch of attempts, moves their deliveries on, inserts
// the next jobs (retries at their time, deferred jobs) and completes the finished jobs in pg-boss, all or nothing.
import type PgBoss from 'pg-boss';
import { withTransaction, type Pool } from '../../../platform/database.js';
import type { Logger } from '../../../platform/logger.js';
import { markDeliveriesDead, recordAttempts, type AttemptRecord } from './delivery-pipeline.queries.js';

export type Outcome =
  | { kind: 'attempt'; job: PgBoss.Job<unknown>; record: AttemptRecord }
  /** Nothing to do (stale, finished, deleted or malformed). */
  | { kind: 'discard'; job: PgBoss.Job<unknown> }
  /** Its endpoint is busy: back to the queue for a moment. */
  | { kind: 'defer'; job: PgBoss.Job<unknown> }
  /** Its endpoint was deactivated: the delivery ends as dead. */
  | { kind: 'inactive'; job: PgBoss.Job<unknown>; deliveryId: string };

interface Pending {
  outcome: Outcome;
  done: () => void;
}

const MAX_BATCH = 500;

export function createRecorder(options: { pool: Pool; boss: PgBoss; log: Logger; queue: string; deferMs: number }) {
  const { pool, boss, log, queue } = options;
  let pending: Pending[] = [];
  let flushing: Promise<void> | undefined;

  /** One batch holds at most one attempt per delivery (the UPDATE … FROM unnest moves each row once). */
  function takeBatch(): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const deliveries = new Set<string>();
    for (const item of pending) {
      const id = item.outcome.kind === 'attempt' ? item.outcome.record.deliveryId : undefined;
      if (batch.length >= MAX_BATCH || (id && deliveries.has(id))) rest.push(item);
      else {
        if (id) deliveries.add(id);
        batch.push(item);
      }
    }
    pending = rest;
    return batch;
  }

  async function commit(batch: Pending[]) {
    const outcomes = batch.map((p) => p.outcome);
    await withTransaction(pool, async (tx) => {
      const db = { executeSql: (text: string, values: unknown[]) => tx.query(text, values) };
      const attempts = outcomes.flatMap((o) => (o.kind === 'attempt' ? [o.record] : []));
      const recorded = await recordAttempts(tx, attempts);
      await markDeliveriesDead(tx, outcomes.flatMap((o) => (o.kind === 'inactive' ? [o.deliveryId] : [])), 'the endpoint is inactive');
      const deferUntil = new Date(Date.now() + options.deferMs);
      const next: PgBoss.JobInsert[] = [
        ...recorded
          .filter((r) => r.trigger === 'scheduled' && r.status === 'retry_scheduled' && r.nextRetryAt)
          .map((r) => ({ name: queue, data: { deliveryId: r.deliveryId, trigger: 'scheduled', step: r.step }, startAfter: r.nextRetryAt! })),
        ...outcomes.flatMap((o) => (o.kind === 'defer' ? [{ name: queue, data: o.job.data as object, startAfter: deferUntil }] : [])),
      ];
      if (next.length) await boss.insert(next, { db });
      // complete(name, ids, data, options): with ids as an array the third argument is the output, not the options.
      await (boss.complete as unknown as (n: string, ids: string[], data: null, o: { db: PgBoss.Db }) => Promise<unknown>)(
        queue,
        outcomes.map((o) => o.job.id),
        null,
        { db },
      );
    });
  }

  async function flushAll() {
    while (pending.length) {
      const batch = takeBatch();
      try {
        await commit(batch);
      } catch (error) {
        // Nothing was recorded; the jobs stay active in pg-boss, expire and run again.
        log.warn({ err: (error as Error).message, jobs: batch.length }, 'recording webhook attempts failed');
      }
      for (const item of batch) item.done();
    }
    flushing = undefined;
  }

  return {
    submit(outcome: Outcome): Promise<void> {
      return new Promise((resolve) => {
        pending.push({ outcome, done: resolve });
        flushing ??= Promise.resolve().then(flushAll);
      });
    },
    async drain() {
      while (flushing) await flushing;
    },
  };
}
