// Refusals by explanation code, counted in memory by their decider (a partition, or a process's stack coordinator) and
// added to refusal_counts every few seconds and at a clean stop. Counting costs a map update; a crash loses at most
// the counts of the last interval (and of a flush that failed, which is retried with the next one).
import { utcHour } from '../../domains/insights/insight-period.rules.js';
import type { Pool } from '../../platform/database.js';
import type { Logger } from '../../platform/logger.js';
import type { StackOutcome } from '../../contract/checkout.schemas.js';
import type { PartitionCall } from '../messages.js';
import { addRefusalCounts, type RefusalRow, type RefusalSource } from './refusal-counts.sql.js';
import { ofKind, voucherKey, type VoucherStateCache } from './voucher-state-cache.js';

export type { RefusalSource } from './refusal-counts.sql.js';

export const REFUSAL_FLUSH_MS = 2_000;
/** Distinct (workspace, campaign, code, source, hour) kept between flushes at most; more are dropped (and logged). */
const MAX_KEYS = 50_000;

/** The code of a refused outcome (`ok: false` or `valid: false`), or undefined for anything else. */
export function refusalCodeOf(outcome: unknown): string | undefined {
  if (typeof outcome !== 'object' || outcome === null) return undefined;
  const o = outcome as { ok?: unknown; valid?: unknown; code?: unknown; idempotent?: unknown };
  if ((o.ok === false || o.valid === false) && typeof o.code === 'string' && o.idempotent !== true) return o.code;
  return undefined;
}

export class RefusalCounts {
  private counts = new Map<string, RefusalRow>();
  private flushing: Promise<void> | undefined;
  private dropped = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Pool,
    private readonly writer: number,
    private readonly log: Logger,
    intervalMs = REFUSAL_FLUSH_MS,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  add(workspaceId: string, campaignId: string | null, code: string, source: RefusalSource, now: number, count = 1): void {
    const hour = utcHour(now);
    const key = `${workspaceId} ${campaignId ?? ''} ${code} ${source} ${hour}`;
    const row = this.counts.get(key);
    if (row) row.count += count;
    else if (this.counts.size < MAX_KEYS) this.counts.set(key, { workspaceId, campaignId, code, source, hour: new Date(hour), count });
    else this.dropped += count;
  }

  /** Writes what was counted since the last flush, in one statement; on failure keeps it for the next one. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.dropped) {
      this.log.warn({ dropped: this.dropped }, 'refusal counts dropped: too many distinct keys between two flushes');
      this.dropped = 0;
    }
    if (this.counts.size === 0) return;
    const rows = this.counts;
    this.counts = new Map();
    try {
      await addRefusalCounts(this.db, [...rows.values()], this.writer);
    } catch (error) {
      for (const [key, row] of rows) {
        const now = this.counts.get(key);
        if (now) now.count += row.count;
        else if (this.counts.size < MAX_KEYS) this.counts.set(key, row);
      }
      this.log.warn({ err: (error as Error).message }, 'writing refusal counts failed; retrying with the next flush');
    }
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/** A refusal answered counts under its code and the voucher's campaign (written to refusal_counts every few seconds). */
export function countRefusal(counts: RefusalCounts, cache: VoucherStateCache, call: { type: string; workspaceId: string; code: string }, outcome: unknown, now: number): void {
  const code = refusalCodeOf(outcome);
  if (code === undefined) return;
  const campaignId = cache.peek(voucherKey(call.workspaceId, call.code))?.snapshot?.campaignId ?? null;
  counts.add(call.workspaceId, campaignId, code, call.type === 'validate' ? 'validation' : 'redemption', now);
}

/** A refused stack counts once, under the first refused entry's campaign (as the cross-partition coordinator counts). */
export function countStackRefusal(counts: RefusalCounts, cache: VoucherStateCache, call: Extract<PartitionCall, { type: 'stack' }>, outcome: StackOutcome, now: number): void {
  const code = refusalCodeOf(outcome);
  if (code === undefined) return;
  const item = call.vouchers[outcome.results.findIndex((r) => !r.ok && r.code !== 'skipped')];
  const voucher = item && ofKind(cache.peek(voucherKey(call.workspaceId, item.code)), item.tierId !== undefined ? 'TIER' : 'CODE');
  counts.add(call.workspaceId, voucher?.campaignId ?? null, code, 'stack', now);
}
