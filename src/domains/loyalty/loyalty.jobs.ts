// The worker's loyalty jobs. The inbox subscriber reacts to order.paid, order.canceled and customer.segment.entered:
// each reaction runs in the transaction that deletes its inbox row (taken with SKIP LOCKED), so it commits exactly
// once or not at all, whatever kills a worker. The points sweep (activation, expiry, expiring notices) is a pg-boss
// job that schedules its successor first (startAfter the interval; the stately queue keeps one waiting), so it runs
// every LOYALTY_JOBS_INTERVAL in one worker at a time and survives a worker killed mid-run (pg-boss expires and retries).
import type PgBoss from 'pg-boss';
import { withTransaction, type Pool } from '../../platform/database.js';
import { startInboxLoops } from '../../platform/inbox-loops.js';
import type { Logger } from '../../platform/logger.js';
import { recordEvents, type NewEvent } from '../events/index.js';
import { reactToEvent } from './earning.service.js';
import { placeMember, runLoyaltyWork } from './member.service.js';
import { activateBucket, expireBucket } from './points-ledger.queries.js';
import { findBucketsToActivate, findBucketsToExpire, markExpiringBuckets, takeInboxEvent, type DueBucket } from './reaction.queries.js';

export const LOYALTY_POINTS_QUEUE = 'loyalty-points';

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

export function loyaltyPointsQueue(): PgBoss.Queue {
  return { name: LOYALTY_POINTS_QUEUE, policy: 'stately', expireInSeconds: 300, retryLimit: 3, retryDelay: 1 };
}

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

export async function startLoyaltyJobs(options: { boss: PgBoss; pool: Pool; log: Logger; settings?: Partial<LoyaltyJobSettings> }): Promise<LoyaltyJobs> {
  const { boss, pool, log } = options;
  const settings = { ...DEFAULT_LOYALTY_JOB_SETTINGS, ...options.settings };

  async function sweep() {
    return sweepPoints(pool);
  }

  await boss.work(LOYALTY_POINTS_QUEUE, { pollingIntervalSeconds: Math.min(2, Math.max(0.5, settings.intervalMs / 2000)) }, async () => {
    // The successor first: a run killed midway leaves the next one scheduled.
    await boss.send(LOYALTY_POINTS_QUEUE, {}, { startAfter: new Date(Date.now() + settings.intervalMs) });
    const done = await sweep();
    if (done.activated + done.expired + done.notified > 0) log.info(done, 'loyalty points swept');
  });
  await boss.send(LOYALTY_POINTS_QUEUE, {});

  // A failed reaction leaves its row in the inbox (its transaction rolled back): taken again after the pause.
  const inbox = startInboxLoops(() => reactToNextEvent(pool), { concurrency: settings.concurrency, pollMs: settings.pollMs, log, what: 'loyalty reaction' });
  log.info({ settings }, 'loyalty jobs started');
  return {
    wake: inbox.wake,
    sweep,
    async stop() {
      await inbox.stop();
      await boss.offWork(LOYALTY_POINTS_QUEUE);
    },
  };
}
