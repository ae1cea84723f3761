// The worker's loyalty jobs. The inbox subscriber reacts to order.paid, order.canceled and customer.segment.entered:
// each reaction runs in the transaction that deletes its inbox row (taken with SKIP LOCKED), so it commits exactly
// once or not at all, whatever kills a worker. The points sweep (activation, expiry, expiring notices) runs on a clock
// of its own every LOYALTY_JOBS_INTERVAL, in one worker at a time (a session advisory lock), whatever a run met.
import { withTransaction, type Pool } from '../../platform/database.js';
import { startInboxLoops } from '../../platform/inbox-loops.js';
import type { Logger } from '../../platform/logger.js';
import { recordEvents, type NewEvent } from '../events/index.js';
import { reactToEvent } from './earning.service.js';
import { placeMember, runLoyaltyWork } from './member.service.js';
import { activateBucket, expireBucket } from './points-ledger.queries.js';
import { findBucketsToActivate, findBucketsToExpire, markExpiringBuckets, takeInboxEvent, type DueBucket } from './reaction.queries.js';

export interface LoyaltyJobSettings {
  /** How often pending points activate and due points expire (LOYALTY_JOBS_INTERVAL). */
  intervalMs: number;
  /** Inbox events reacted to at once (each its own transaction). */
  concurrency: number;
  /** Idle polling of the inbox. */
  pollMs: number;
}

export const DEFAULT_LOYALTY_JOB_SETTINGS: LoyaltyJobSettings = Object.freeze({ intervalMs: 60_000, concurrency: 4, pollMs: 200 });

const SWEEP_BATCH = 500;

/** Held by the worker sweeping (pg_try_advisory_lock): another worker's clock skips that tick. */
const SWEEP_LOCK = 7251;

export interface LoyaltyJobs {
  wake(): void;
  stop(): Promise<void>;
  /** One sweep now (tests, and the job's body). */
  sweep(): Promise<{ activated: number; expired: number; notified: number }>;
}

/** Reacts to the oldest free inbox event; false when there was none. */
export async function reactToNextEvent(pool: Pool): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    const event = await takeInboxEvent(tx);
    if (!event) return false;
    const events: NewEvent[] = [];
    await reactToEvent({ tx, emit: (type, payload) => events.push({ workspaceId: event.workspaceId, type, payload }) }, event);
    await recordEvents(tx, events);
    return true;
  });
}

// A run takes due buckets 500 at a time, up to 20 batches of each kind: a backlog drains over a few runs, and a run
// stays well inside its pg-boss expiry.
const SWEEP_ROUNDS = 20;

async function inBatches(find: (limit: number) => Promise<DueBucket[]>, each: (due: DueBucket) => Promise<boolean>): Promise<number> {
  let done = 0;
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    const batch = await find(SWEEP_BATCH);
    for (const due of batch) if (await each(due)) done++;
    if (batch.length < SWEEP_BATCH) break;
  }
  return done;
}

/** Activation, expiry and expiring notices: each bucket in its own transaction, each at most once. */
export async function sweepPoints(pool: Pool): Promise<{ activated: number; expired: number; notified: number }> {
  const activated = await inBatches(
    (limit) => findBucketsToActivate(pool, limit),
    (due) =>
      runLoyaltyWork(pool, due.workspaceId, async (work) => {
        const change = await activateBucket(work.tx, due.workspaceId, due.bucketId);
        if (!change) return false;
        work.emit('loyalty.points.activated', { memberId: change.memberId, points: change.points, entryId: change.entryId, balance: change.balanceAfter, bucketId: due.bucketId });
        await placeMember(work, due.workspaceId, change.memberId);
        return true;
      }),
  );
  const expired = await inBatches(
    (limit) => findBucketsToExpire(pool, limit),
    (due) =>
      runLoyaltyWork(pool, due.workspaceId, async (work) => {
        const change = await expireBucket(work.tx, due.workspaceId, due.bucketId);
        if (!change?.entryId) return false;
        work.emit('loyalty.points.expired', { memberId: change.memberId, points: change.points, entryId: change.entryId, balance: change.balanceAfter, bucketId: due.bucketId });
        return true;
      }),
  );
  let notified = 0;
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    const count = await withTransaction(pool, async (tx) => {
      const notices = await markExpiringBuckets(tx, SWEEP_BATCH);
      await recordEvents(
        tx,
        notices.map((n) => ({
          workspaceId: n.workspaceId,
          type: 'loyalty.points.expiring' as const,
          payload: { memberId: n.memberId, points: n.points, expiresAt: n.expiresAt.toISOString(), bucketId: n.bucketId },
        })),
      );
      return notices.length;
    });
    notified += count;
    if (count < SWEEP_BATCH) break;
  }
  return { activated, expired, notified };
}

export async function startLoyaltyJobs(options: { pool: Pool; log: Logger; settings?: Partial<LoyaltyJobSettings> }): Promise<LoyaltyJobs> {
  const { pool, log } = options;
  const settings = { ...DEFAULT_LOYALTY_JOB_SETTINGS, ...options.settings };
  const sweep = () => sweepPoints(pool);
  const clock = startSweepClock(pool, log, settings.intervalMs);
  // A failed reaction leaves its row in the inbox (its transaction rolled back): taken again after the pause.
  const inbox = startInboxLoops(() => reactToNextEvent(pool), { concurrency: settings.concurrency, pollMs: settings.pollMs, log, what: 'loyalty reaction' });
  log.info({ settings }, 'loyalty jobs started');
  return {
    wake: inbox.wake,
    sweep,
    async stop() {
      await inbox.stop();
      await clock.stop();
    },
  };
}

/**
 * A sweep at once, then one every `intervalMs` counted from the previous start (right after it when a run took longer):
 * a run that fails is logged and the next comes on time, so no error or slow run can stop the clock. A job queue's
 * poll and retry delays stood between due points and their sweep before; a timer here does not.
 */
function startSweepClock(pool: Pool, log: Logger, intervalMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    const started = performance.now();
    running = sweepOnce(pool)
      .then((done) => {
        if (done && done.activated + done.expired + done.notified > 0) log.info({ ...done, sweepMs: Math.round(performance.now() - started) }, 'loyalty points swept');
      })
      .catch((error: Error) => log.warn({ err: error.message }, 'loyalty points sweep failed; the next one runs on time'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, Math.max(0, intervalMs - (performance.now() - started)));
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** One sweep if no other worker is sweeping (undefined when one is). The lock is the session's: a killed worker frees it. */
async function sweepOnce(pool: Pool): Promise<Awaited<ReturnType<typeof sweepPoints>> | undefined> {
  const client = await pool.connect();
  let healthy = true;
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [SWEEP_LOCK]);
    if (!rows[0]?.locked) return undefined;
    try {
      return await sweepPoints(pool);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [SWEEP_LOCK]).catch(() => (healthy = false));
    }
  } catch (error) {
    healthy = false;
    throw error;
  } finally {
    // A session whose unlock may not have happened is closed, never handed back still holding the lock.
    client.release(healthy ? undefined : true);
  }
}
