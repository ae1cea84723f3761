// Partition lease renewals that are slow do not turn into 503s "cannot renew its partition leases":
// - the renewals go through connections of their own: a web thread whose pool is wholly taken (under a flash sale its
//   queue can be seconds long) keeps its slots and goes on redeeming through its partition threads;
// - a renewal that is slow, not failed (a database slowed by the load of a starved machine): a call that finds the
//   slot's lease past its safe time while a renewal is under way waits for it, at most one lease time, and is decided
//   once the renewal lands. The renewal is slowed for real: the test holds the lease table locked while the renewing
//   statement waits on it, then lets it go before the lease has expired in the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/until.js';

async function redeemer(service: TestService) {
  const { api } = await service.newWorkspace();
  const voucher = await api.create('/api/v1/vouchers', { code: `LEASE-${Date.now()}`, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', redemptionLimit: 10 });
  const redeem = () => api.post(`/api/v1/vouchers/${voucher.code}/redemption`, { order: { amount: 1_000, currency: 'EUR' } });
  expect((await redeem()).body).toMatchObject({ ok: true });
  return { code: voucher.code as string, redeem };
}

describe('partition lease renewal, its pool wholly taken', () => {
  const LEASE_MS = 1_000;
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ leaseMs: LEASE_MS, pool: (db) => createPool(db.url, { max: 3, log: createLogger('silent') }) });
  });
  afterAll(async () => service?.close());

  it('keeps its slots while every connection of the web pool is taken for longer than a lease', async () => {
    const { redeem } = await redeemer(service);
    const held = await Promise.all(Array.from({ length: 3 }, () => service.pool.connect()));
    try {
      await new Promise((r) => setTimeout(r, LEASE_MS * 2.5));
      const during = await redeem();
      expect(during.status, JSON.stringify(during.body)).toBe(200);
      expect(during.body).toMatchObject({ ok: true });
      expect(((await service.engine.check()).leases as { owned: number[] }).owned).toHaveLength(64);
    } finally {
      for (const client of held) client.release();
    }
  });
});

describe('a slow partition lease renewal', () => {
  // Ticks every third of a lease; a call may decide for a slot until 90 % of a lease after the last renewal began.
  const LEASE_MS = 8_000;
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ leaseMs: LEASE_MS });
  });
  afterAll(async () => service?.close());

  it('holds a call past the lease’s safe time until the renewal lands, then decides it', async () => {
    const { code, redeem } = await redeemer(service);
    const locker = await service.db.pool.connect();
    let released = false;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE partition_leases IN ACCESS EXCLUSIVE MODE');
      // The tick under way is now stuck in its renewal: when it began, the previous one began a third of a lease
      // (and its own time) before, so the call is past its safe time from about 57 % of a lease on.
      await until(async () => {
        const { rows } = await service.db.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE partition_leases SET expires_at%'`,
        );
        return rows.length > 0;
      }, 10_000, 'the renewal waiting on the lock');
      const stuckAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 0.65 - (Date.now() - stuckAt)));
      const answer = redeem().then((res) => ({ res, at: Date.now() }));
      // Released at 75 %: the renewal began before the lock was seen, so the lease it extends is still live in the
      // database, and the call may decide once it lands.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 0.75 - (Date.now() - stuckAt)));
      await locker.query('COMMIT');
      released = true;
      const releasedAt = Date.now();
      const { res: during, at } = await answer;
      expect(during.status, JSON.stringify(during.body)).toBe(200);
      expect(during.body).toMatchObject({ ok: true });
      // Answered after the renewal, not before: it waited rather than being decided on a lease it could not trust.
      expect(at).toBeGreaterThanOrEqual(releasedAt);
    } finally {
      if (!released) await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
    }
    const { rows } = await service.db.pool.query<{ redeemed_count: number }>('SELECT redeemed_count FROM vouchers WHERE code = $1', [code]);
    expect(rows[0]!.redeemed_count).toBe(2);
  }, 60_000);
});
