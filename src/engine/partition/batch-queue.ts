// How a partition forms its next batch from the queue: requests in arrival order, up to maxBatch, leaving those of
// vouchers in flight (a busy voucher's requests all wait, so its order is kept); one that must run alone goes alone.
import { sqlState } from '../../platform/database.js';
import type { PartitionCall } from '../messages.js';
import { keysOf } from './partition-calls.js';

export interface Queued {
  call: PartitionCall;
  /** Retried by itself after its batch failed on a value PostgreSQL refused. */
  alone?: boolean;
  /** Answered already (a failed batch's answered requests are not run again). */
  done?: boolean;
  /** Run again once after a deadlock. */
  retried?: boolean;
}

/** Takes the next batch out of `queue` (which keeps the rest, in order); `busy` holds the keys of batches in flight. */
export function takeBatch<T extends Queued>(queue: T[], busy: ReadonlyMap<string, number>, maxBatch: number): T[] {
  const isFree = (item: T) => keysOf(item.call).every((key) => !busy.has(key));
  const first = queue.findIndex(isFree);
  if (first === -1) return [];
  if (queue[first]!.alone) return queue.splice(first, 1);
  const taken: T[] = [];
  const kept: T[] = [];
  const held = new Set<string>();
  for (const item of queue) {
    const keys = keysOf(item.call);
    const free = taken.length < maxBatch && !item.alone && keys.every((key) => !busy.has(key) && !held.has(key));
    if (free) taken.push(item);
    else {
      kept.push(item);
      for (const key of keys) held.add(key);
    }
  }
  queue.length = 0;
  queue.push(...kept);
  return taken;
}

/**
 * What of a failed batch runs again, or undefined when its unanswered requests fail. A deadlock (possible only between
 * a batch and a stack over budget rows) undid the statement: all run once more, decided on reloaded state (`stale`). A
 * value PostgreSQL refused (data exception, constraint) must not fail the others: each runs again alone.
 */
export function retriesAfter<T extends Queued>(items: readonly T[], error: unknown): { items: T[]; stale: boolean } | undefined {
  const state = sqlState(error);
  if ((state === '40P01' || state === '40001') && !items.some((item) => item.retried)) {
    return { items: items.filter((item) => !item.done).map((item) => ({ ...item, retried: true })), stale: true };
  }
  if (items.length > 1 && state !== undefined && /^(22|23|54)/.test(state)) {
    return { items: items.filter((item) => !item.done).map((item) => ({ ...item, alone: true })), stale: false };
  }
  return undefined;
}
