// The worker's loyalty jobs running for real (pg-boss on the test database, in this process) with
// LOYALTY_JOBS_INTERVAL = 1s: order.paid earns through the inbox subscriber, pending points activate and due points
// expire within about an interval, each bucket once, and the expiring notice goes out once per bucket.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { defaultServiceSettings } from '../../src/composition.js';
import { startBackgroundJobs, type BackgroundJobs } from '../../src/jobs/background-jobs.js';
import { createPool, type Pool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/until.js';
import { addPoints, createCustomer, createProgram, expectLedgerMatchesCaches, joinMember, member, transactions } from './support.js';

let service: TestService;
let workerPool: Pool;
let jobs: BackgroundJobs;

beforeAll(async () => {
  const settings = { secretsKey: randomBytes(32), allowPrivateTargets: true, timeoutMs: 1_000, retryScheduleMs: [1_000] };
  service = await startTestService({ settings: defaultServiceSettings({ webhooks: settings }) });
  const log = createLogger('silent');
  workerPool = createPool(service.db.url, { max: 8, log });
  jobs = await startBackgroundJobs({ pool: workerPool, log, webhooks: settings, loyalty: { intervalMs: 1_000, pollMs: 50 } });
});
afterEach(async () => expectLedgerMatchesCaches(service.pool));
afterAll(async () => {
  await jobs?.stop();
  await workerPool?.end();
  await service?.close();
});

describe('loyalty jobs in the worker', () => {
  it('earns from order.paid through the subscriber within moments of the commit', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    await api.create(`/api/v1/loyalty/programs/${programId}/earning-rules`, { name: 'ten', trigger: 'ORDER_PAID', points: { type: 'FIXED', points: 10 } });
    const customerId = await createCustomer(api);
    const order = await api.create('/api/v1/orders', { amount: 1_000, currency: 'EUR', customer: { id: customerId } });
    await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' });
    const card = await until(async () => (await api.get(`/api/v1/customers/${customerId}/loyalty`)).body.data[0], 10_000, 'earning');
    expect(card.balance).toBe(10);
  });

  it('activates pending points at activatesAt and expires what is left at expiresAt, once per bucket, at most about an interval late', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const m = await joinMember(api, programId);
    const activatesAt = new Date(Date.now() + 1_500);
    const expiresAt = new Date(Date.now() + 4_000);
    await addPoints(api, m.id, 100, { activatesAt: activatesAt.toISOString(), expiresAt: expiresAt.toISOString() });
    await addPoints(api, m.id, 40);
    expect(await member(api, m.id)).toMatchObject({ balance: 40, pendingBalance: 100 });

    await until(async () => (await member(api, m.id)).pendingBalance === 0, 10_000, 'activation');
    const activatedAt = Date.now();
    expect(activatedAt - activatesAt.getTime()).toBeLessThan(3_000);
    expect((await member(api, m.id)).balance).toBe(140);
    await addPoints(api, m.id, -30); // drawn from the expiring bucket first

    await until(async () => (await member(api, m.id)).balance === 40, 10_000, 'expiry');
    expect(Date.now() - expiresAt.getTime()).toBeLessThan(3_000);
    await new Promise((r) => setTimeout(r, 2_500)); // more sweeps: nothing happens twice
    const types = (await transactions(api, m.id)).map((e) => [e.type, e.amount, e.pendingAmount]);
    expect(types).toEqual([
      ['POINTS_EXPIRED', -70, 0],
      ['ADJUSTMENT', -30, 0],
      ['PENDING_ACTIVATED', 100, -100],
      ['ADJUSTMENT', 40, 0],
      ['ADJUSTMENT', 0, 100],
    ]);
    const { rows } = await service.pool.query(
      `SELECT type, count(*)::int AS n FROM events WHERE workspace_id = $1 AND type IN ('loyalty.points.activated', 'loyalty.points.expired', 'loyalty.points.expiring') GROUP BY type ORDER BY type`,
      [workspaceId],
    );
    expect(rows).toEqual([
      { type: 'loyalty.points.activated', n: 1 },
      { type: 'loyalty.points.expired', n: 1 },
      { type: 'loyalty.points.expiring', n: 1 },
    ]);
  }, 30_000);

  it('sends loyalty.points.expiring once per bucket within the program’s notifyDaysBefore, and not before', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api, { expiration: { type: 'ROLLING', days: 30, notifyDaysBefore: 3 } });
    const m = await joinMember(api, programId);
    await addPoints(api, m.id, 10, { expiresAt: new Date(Date.now() + 2 * 86_400_000).toISOString() });
    await addPoints(api, m.id, 20); // the program's 30 days: outside the 3-day notice
    await until(
      async () => (await service.pool.query(`SELECT 1 FROM events WHERE workspace_id = $1 AND type = 'loyalty.points.expiring'`, [workspaceId])).rows.length > 0,
      10_000,
      'notice',
    );
    await new Promise((r) => setTimeout(r, 2_500));
    const { rows } = await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = 'loyalty.points.expiring'`, [workspaceId]);
    expect(rows.map((r) => [r.payload.memberId, r.payload.points])).toEqual([[m.id, 10]]);
  }, 30_000);
});
