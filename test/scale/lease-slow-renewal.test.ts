// A renewal that is slow, not failed (a database slowed by the load of a starved machine), does not turn into 503s:
// a call that finds the slot's lease past its safe time while a renewal is under way waits for it, at most one lease
// time, and is decided once the renewal lands. The renewal is slowed for real: the test holds the lease table locked
// while the renewing statement waits on it, then lets it go before the lease has expired in the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/until.js';

// Ticks every third of a lease; a call may decide for a slot until 90 % of a lease after the last renewal began.
const LEASE_MS = 8_000;
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ leaseMs: LEASE_MS });
});
afterAll(async () => service?.close());

describe('a slow partition lease renewal', () => {
  it('holds a call past the lease’s safe time until the renewal lands, then decides it', async () => {
    const { api } = await service.newWorkspace();
    const voucher = await api.create('/api/v1/vouchers', { code: `SLOW-${Date.now()}`, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', redemptionLimit: 10 });
    const redeem = () => api.post(`/api/v1/vouchers/${voucher.code}/redemption`, { order: { amount: 1_000, currency: 'EUR' } });
    expect((await redeem()).body).toMatchObject({ ok: true });

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
      const answer = redeem();
      // Released at 75 %: the renewal began before the lock was seen, so the lease it extends is still live in the
      // database, and the call may decide once it lands.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 0.75 - (Date.now() - stuckAt)));
      await locker.query('COMMIT');
      released = true;
      const releasedAt = Date.now();
      const during = await answer;
      expect(during.status, JSON.stringify(during.body)).toBe(200);
      expect(during.body).toMatchObject({ ok: true });
      // Answered after the renewal, not before: it waited rather than being decided on a lease it could not trust.
      expect(Date.now()).toBeGreaterThanOrEqual(releasedAt);
    } finally {
      if (!released) await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
    }
    const { rows } = await service.db.pool.query<{ redeemed_count: number }>('SELECT redeemed_count FROM vouchers WHERE code = $1', [voucher.code]);
    expect(rows[0]!.redeemed_count).toBe(2);
  }, 60_000);
});
