// The worker's scheduled pruning on a real pg-boss: audit entries past AUDIT_RETENTION_DAYS, expired idempotency keys,
// and events past EVENT_RETENTION with their webhook deliveries are deleted soon after boot and by every job the
// schedule sends, in bounded batches; recent ones stay, and so do events the outbox still owes.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_RETENTION_QUEUE, pruneExpiredAuditEntries } from '../../src/domains/audit/index.js';
import { IDEMPOTENCY_KEY_PRUNING_QUEUE } from '../../src/domains/redemptions/idempotency-key.jobs.js';
import { EVENT_RETENTION_QUEUE, pruneExpiredEvents } from '../../src/domains/webhooks/index.js';
import { createWorkspace } from '../../src/domains/workspaces/index.js';
import { startBackgroundJobs, type BackgroundJobs } from '../../src/jobs/background-jobs.js';
import { startJobQueue, type JobQueue } from '../../src/jobs/job-queue.js';
import { createPool, type Pool, type Sql } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { seedAuditEntry } from '../support/audit-entries.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { seedDelivery, seedEndpoint, seedEvent, seedEvents } from '../support/outbox-rows.js';

const DAY = 86_400_000;
const RETENTION_DAYS = 30;
const log = createLogger('silent');
const ago = (ms: number) => new Date(Date.now() - ms);

let db: TestDatabase;
let workerPool: Pool;
let jobs: BackgroundJobs | undefined;
let sender: JobQueue | undefined;
let workspaceId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  workerPool = createPool(db.url, { max: 8, log });
  workspaceId = (await createWorkspace(db.pool, 'pruning')).id;
});
afterAll(async () => {
  await sender?.stop();
  await jobs?.stop();
  await workerPool?.end();
  await db?.drop();
});

async function insertIdempotencyKey(createdAt: Date): Promise<string> {
  const key = `key-${randomUUID()}`;
  await db.pool.query(
    `INSERT INTO idempotency_keys (workspace_id, key, request_hash, response, created_at) VALUES ($1, $2, 'hash', '{}', $3)`,
    [workspaceId, key, createdAt],
  );
  return key;
}

async function remaining(): Promise<{ entries: string[]; keys: string[] }> {
  const entries = await db.pool.query<{ id: string }>('SELECT id FROM audit_entries ORDER BY id');
  const keys = await db.pool.query<{ key: string }>('SELECT key FROM idempotency_keys ORDER BY key');
  return { entries: entries.rows.map((r) => r.id), keys: keys.rows.map((r) => r.key) };
}

const existing = async (table: 'events' | 'webhook_deliveries' | 'webhook_delivery_attempts', column: string, ids: string[]) =>
  (await db.pool.query<{ id: string }>(`SELECT ${column} AS id FROM ${table} WHERE ${column} = ANY($1::uuid[])`, [ids])).rows.map((r) => r.id).sort();

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the pruning job');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('scheduled pruning in the worker', () => {
  it('schedules the jobs and runs them soon after boot: old entries, expired keys and old events go, recent ones stay', async () => {
    const other = (await createWorkspace(db.pool, 'other')).id;
    const oldEntry = await seedAuditEntry(db.pool, workspaceId, { createdAt: ago((RETENTION_DAYS + 1) * DAY) });
    const oldElsewhere = await seedAuditEntry(db.pool, other, { createdAt: ago(2 * RETENTION_DAYS * DAY) });
    const recentEntry = await seedAuditEntry(db.pool, workspaceId, { createdAt: ago((RETENTION_DAYS - 1) * DAY) });
    const expiredKey = await insertIdempotencyKey(ago(8 * DAY));
    const liveKey = await insertIdempotencyKey(ago(6 * DAY));
    const endpoint = await seedEndpoint(db.pool, workspaceId);
    const oldEvents = await seedEvents(db.pool, workspaceId, 5, (RETENTION_DAYS + 1) * DAY);
    const oldDelivery = await seedDelivery(db.pool, workspaceId, endpoint, oldEvents[0]!, 'delivered');
    const recentEvent = await seedEvent(db.pool, workspaceId, (RETENTION_DAYS - 1) * DAY);
    const recentDelivery = await seedDelivery(db.pool, workspaceId, endpoint, recentEvent, 'delivered');

    jobs = await startBackgroundJobs({
      pool: workerPool,
      log,
      webhooks: { secretsKey: randomBytes(32), allowPrivateTargets: true, timeoutMs: 1_000, retryScheduleMs: [1_000] },
      auditRetentionDays: RETENTION_DAYS,
      // Two events per statement: the run goes on batch after batch until every old one is gone.
      eventRetention: { retentionMs: RETENTION_DAYS * DAY, batchSize: 2 },
    });

    await until(async () => {
      const left = await remaining();
      const events = await existing('events', 'id', oldEvents);
      return !left.entries.includes(oldEntry) && !left.entries.includes(oldElsewhere) && !left.keys.includes(expiredKey) && events.length === 0;
    });
    const left = await remaining();
    expect(left.entries).toEqual([recentEntry]);
    expect(left.keys).toEqual([liveKey]);
    expect(await existing('events', 'id', [...oldEvents, recentEvent])).toEqual([recentEvent]);
    expect(await existing('webhook_deliveries', 'id', [oldDelivery, recentDelivery])).toEqual([recentDelivery]);

    const { rows: schedules } = await db.pool.query('SELECT name, cron, timezone FROM pgboss.schedule ORDER BY name');
    expect(schedules).toEqual([
      { name: AUDIT_RETENTION_QUEUE, cron: '7 * * * *', timezone: 'UTC' },
      { name: EVENT_RETENTION_QUEUE, cron: '37 * * * *', timezone: 'UTC' },
      { name: IDEMPOTENCY_KEY_PRUNING_QUEUE, cron: '*/15 * * * *', timezone: 'UTC' },
    ]);
    const { rows: queues } = await db.pool.query(`SELECT name, policy FROM pgboss.queue WHERE name = ANY($1) ORDER BY name`, [
      [AUDIT_RETENTION_QUEUE, EVENT_RETENTION_QUEUE, IDEMPOTENCY_KEY_PRUNING_QUEUE],
    ]);
    expect(queues).toEqual([
      { name: AUDIT_RETENTION_QUEUE, policy: 'stately' },
      { name: EVENT_RETENTION_QUEUE, policy: 'stately' },
      { name: IDEMPOTENCY_KEY_PRUNING_QUEUE, policy: 'stately' },
    ]);
  });

  it('runs again on every job sent to its queue (what the schedule does each tick), however many rows are due', async () => {
    expect(jobs).toBeDefined();
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO audit_entries (workspace_id, actor_type, actor_id, actor_label, operation, resource_type, request_id, created_at)
       SELECT $1, 'system', 'system', 'system', 'campaigns.create', 'campaign', 'req-' || n, now() - make_interval(days => $2 + 1, secs => n)
       FROM generate_series(1, 12001) AS n RETURNING id`,
      [workspaceId, RETENTION_DAYS],
    );
    expect(rows).toHaveLength(12_001);
    const recentEntry = await seedAuditEntry(db.pool, workspaceId, { createdAt: ago(DAY) });
    const expiredKey = await insertIdempotencyKey(ago(30 * DAY));

    sender = await startJobQueue(db.pool, log, { queues: [], maintenanceIntervalSeconds: 60 });
    expect(await sender.boss.send(AUDIT_RETENTION_QUEUE, {})).toEqual(expect.any(String));
    expect(await sender.boss.send(IDEMPOTENCY_KEY_PRUNING_QUEUE, {})).toEqual(expect.any(String));

    await until(async () => {
      const { rows: due } = await db.pool.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM audit_entries WHERE created_at < now() - make_interval(days => $1))::int
              + (SELECT count(*) FROM idempotency_keys WHERE key = $2)::int AS n`,
        [RETENTION_DAYS, expiredKey],
      );
      return due[0]!.n === 0;
    }, 60_000);
    expect((await remaining()).entries).toContain(recentEntry);
  });
});

describe('audit retention', () => {
  it('deletes in statements of at most 5,000 rows until none is left', async () => {
    // Counted alone: a scheduled run of the worker must not share the work.
    await sender?.stop();
    await jobs?.stop();
    sender = jobs = undefined;
    await db.pool.query(
      `INSERT INTO audit_entries (workspace_id, actor_type, actor_id, actor_label, operation, resource_type, request_id, created_at)
       SELECT $1, 'system', 'system', 'system', 'campaigns.create', 'campaign', 'req-' || n, now() - make_interval(days => 400, secs => n)
       FROM generate_series(1, 10500) AS n`,
      [workspaceId],
    );
    const deletedPerStatement: number[] = [];
    const counting: Sql = {
      async query(text, values) {
        const result = await db.pool.query(text, values as unknown[]);
        if (/^\s*DELETE/.test(text)) deletedPerStatement.push(result.rowCount ?? 0);
        return result as never;
      },
    };
    expect(await pruneExpiredAuditEntries(counting, 365)).toBe(10_500);
    expect(deletedPerStatement).toEqual([5_000, 5_000, 500]);
  });
});

describe('event retention', () => {
  const RETENTION = RETENTION_DAYS * DAY;
  const OLD = RETENTION + DAY;

  it('deletes old events with their deliveries and attempts, and keeps young ones and every one the outbox still owes', async () => {
    expect(jobs).toBeUndefined();
    const other = (await createWorkspace(db.pool, 'other events')).id;
    const [endpoint, second] = [await seedEndpoint(db.pool, workspaceId), await seedEndpoint(db.pool, workspaceId)];
    const plain = await seedEvent(db.pool, workspaceId, OLD);
    const elsewhere = await seedEvent(db.pool, other, OLD);
    const finished = await seedEvent(db.pool, workspaceId, OLD);
    const finishedDeliveries = [await seedDelivery(db.pool, workspaceId, endpoint, finished, 'delivered'), await seedDelivery(db.pool, workspaceId, second, finished, 'dead')];
    const undispatched = await seedEvent(db.pool, workspaceId, OLD, { dispatched: false });
    const pending = await seedEvent(db.pool, workspaceId, OLD);
    const pendingDeliveries = [await seedDelivery(db.pool, workspaceId, endpoint, pending, 'delivered'), await seedDelivery(db.pool, workspaceId, second, pending, 'pending')];
    const retrying = await seedEvent(db.pool, workspaceId, OLD);
    await seedDelivery(db.pool, workspaceId, endpoint, retrying, 'retry_scheduled');
    const replayed = await seedEvent(db.pool, workspaceId, OLD);
    await seedDelivery(db.pool, workspaceId, endpoint, replayed, 'delivered', { requestedJob: 'replay' });
    const young = await seedEvent(db.pool, workspaceId, RETENTION - DAY);
    const youngDelivery = await seedDelivery(db.pool, workspaceId, endpoint, young, 'delivered');

    expect(await pruneExpiredEvents(db.pool, { retentionMs: RETENTION })).toEqual({ events: 3, deliveries: 2 });
    const all = [plain, elsewhere, finished, undispatched, pending, retrying, replayed, young];
    expect(await existing('events', 'id', all)).toEqual([undispatched, pending, retrying, replayed, young].sort());
    expect(await existing('webhook_deliveries', 'id', [...finishedDeliveries, ...pendingDeliveries, youngDelivery])).toEqual([...pendingDeliveries, youngDelivery].sort());
    expect(await existing('webhook_delivery_attempts', 'delivery_id', finishedDeliveries)).toEqual([]);
    // Once its last delivery is finished, the event goes at the next run.
    await db.pool.query(`UPDATE webhook_deliveries SET status = 'dead' WHERE event_id = $1`, [pending]);
    expect(await pruneExpiredEvents(db.pool, { retentionMs: RETENTION })).toEqual({ events: 1, deliveries: 2 });
    expect(await existing('events', 'id', [pending])).toEqual([]);
  });

  it('deletes in statements of at most the batch size until none is left', async () => {
    const endpoint = await seedEndpoint(db.pool, workspaceId);
    const old = await seedEvents(db.pool, workspaceId, 25, OLD);
    for (const event of old.slice(0, 3)) await seedDelivery(db.pool, workspaceId, endpoint, event, 'delivered');
    const prunedPerStatement: number[] = [];
    const counting: Sql = {
      async query(text, values) {
        const result = await db.pool.query(text, values as unknown[]);
        if (/DELETE FROM events/.test(text)) prunedPerStatement.push((result.rows[0] as { events: number }).events);
        return result as never;
      },
    };
    expect(await pruneExpiredEvents(counting, { retentionMs: RETENTION, batchSize: 10 })).toEqual({ events: 25, deliveries: 3 });
    expect(prunedPerStatement).toEqual([10, 10, 5]);
    expect(await existing('events', 'id', old)).toEqual([]);
  });
});
