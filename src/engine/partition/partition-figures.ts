// What a partition counts of its group commits, for /ready (averages) and /metrics (histograms of batch sizes and
// commit times), and the times of a batch that a traced request is answered with (its spans are made by the web thread).
import type { PartitionFigureSnapshot } from '../../contract/engine-port.js';
import { BucketCounts } from '../../platform/bucket-counts.js';
import type { Pool } from '../../platform/database.js';
import type { FencedCall } from '../messages.js';

export const BATCH_SIZE_BOUNDS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] as const;
export const COMMIT_SECONDS_BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

/** When a traced request's batch started deciding, began its commit statement and committed (ms since the epoch). */
export interface BatchTiming {
  startedAt: number;
  commitStartedAt: number;
  committedAt: number;
  writes: number;
  attempts: number;
}

export const epochMs = () => performance.timeOrigin + performance.now();

export class PartitionFigures {
  batches = 0;
  private writes = 0;
  private commitMs = 0;
  retries = 0;
  private readonly batchSizes = new BucketCounts(BATCH_SIZE_BOUNDS);
  private readonly commitSeconds = new BucketCounts(COMMIT_SECONDS_BOUNDS);

  /**
   * One batch of `writes` requests whose commit took `ms`; `ok` false when a guard sent it round again. A batch that
   * had nothing to write (refusals only) ran no statement: /ready counts it, the histograms do not.
   */
  committed(writes: number, ms: number, result: { ok: boolean; statement: boolean }): void {
    this.batches += 1;
    this.writes += writes;
    this.commitMs += ms;
    if (!result.ok) this.retries += 1;
    if (!result.statement) return;
    this.batchSizes.observe(writes);
    this.commitSeconds.observe(ms / 1000);
  }

  /** The group-commit part of /ready's partition figures. */
  averages() {
    const { batches, writes, commitMs } = this;
    return {
      batches,
      averageBatch: batches ? Math.round((writes / batches) * 10) / 10 : 0,
      averageCommitMs: batches ? Math.round((commitMs / batches) * 100) / 100 : 0,
      guardRetries: this.retries,
    };
  }

  snapshot(state: { queued: number; holds: number; cached: number }, db: Pool): PartitionFigureSnapshot {
    return {
      ...state,
      batchSizes: this.batchSizes.snapshot(),
      commitSeconds: this.commitSeconds.snapshot(),
      guardRetries: this.retries,
      pool: { total: db.totalCount, idle: db.idleCount, waiting: db.waitingCount },
    };
  }
}

/** Whether any request of a batch carries a trace: only then are its times kept. */
export function anyTraced(calls: Iterable<{ call: FencedCall }>): boolean {
  for (const { call } of calls) if (call.trace) return true;
  return false;
}
