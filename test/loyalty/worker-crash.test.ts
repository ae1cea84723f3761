// The worker as a real process (dist/workers/background.js), killed with SIGKILL in the middle of an earning: its
// reaction holds the inbox row and waits on the card's lock (held here), so the kill lands mid-transaction. Nothing
// is earned by the dead worker; the next worker earns exactly once, and a replayed order.paid earns nothing more.
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, freePort, spawnWorker, type WorkerProcess } from '../support/processes.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/until.js';
import { createCustomer, createProgram, expectLedgerMatchesCaches, joinMember, member } from './support.js';

let service: TestService;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  service = await startTestService();
});
afterEach(() => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
});
afterAll(async () => service?.close());

async function startWorker(): Promise<WorkerProcess> {
  const env = baseEnv({ DATABASE_URL: service.db.url, LOYALTY_JOBS_INTERVAL: '1s', LOG_LEVEL: 'warn', SECRET_KEY: 'k'.repeat(43) });
  const worker = await spawnWorker(env, await freePort());
  workers.push(worker.child);
  return worker;
}

async function inboxState(): Promise<{ rows: number; free: number }> {
  const all = await service.pool.query('SELECT count(*)::int AS n FROM loyalty_event_inbox');
  const free = await service.pool.query('SELECT event_id FROM loyalty_event_inbox FOR UPDATE SKIP LOCKED');
  return { rows: all.rows[0].n, free: free.rows.length };
}

describe('a worker killed mid-earning', () => {
  it('neither loses nor doubles the earning', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    await api.create(`/api/v1/loyalty/programs/${programId}/earning-rules`, { name: 'ten', trigger: 'ORDER_PAID', points: { type: 'FIXED', points: 10 } });
    const customerId = await createCustomer(api);
    const m = await joinMember(api, programId, customerId);

    // Hold the card's row: the worker's reaction takes the inbox row, then waits here, inside its transaction.
    const blocker = await service.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM vouchers WHERE id = $1 FOR UPDATE', [m.id]);
    const first = await startWorker();
    const order = await api.create('/api/v1/orders', { amount: 1_000, currency: 'EUR', customer: { id: customerId } });
    await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' });
    await until(async () => {
      const state = await inboxState();
      return state.rows === 1 && state.free === 0;
    }, 10_000, 'the worker holding the event');

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await blocker.query('ROLLBACK');
    blocker.release();
    // The dead worker's transaction rolls back: the event is back in the inbox, nothing earned.
    await until(async () => (await inboxState()).free === 1, 10_000, 'the event released');
    expect((await member(api, m.id)).balance).toBe(0);

    const second = await startWorker();
    await until(async () => (await member(api, m.id)).balance === 10, 10_000, 'the earning');
    // order.paid seen again: the (rule, order) key earns nothing twice.
    await service.pool.query(
      `INSERT INTO events (workspace_id, type, payload) SELECT workspace_id, type, payload FROM events WHERE workspace_id = $1 AND type = 'order.paid'`,
      [workspaceId],
    );
    await until(async () => (await inboxState()).rows === 0, 10_000, 'the replay handled');
    expect((await member(api, m.id)).balance).toBe(10);
    const earnings = await service.pool.query('SELECT count(*)::int AS n FROM loyalty_earnings WHERE member_id = $1', [m.id]);
    expect(earnings.rows[0].n).toBe(1);
    await expectLedgerMatchesCaches(service.pool);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 90_000);
});
