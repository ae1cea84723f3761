// The partition leases renew on connections of their own: a web thread whose pool is wholly taken (under a flash
// sale its queue can be seconds long) keeps its slots and goes on redeeming through its partition threads, instead of
// answering 503 "cannot renew its partition leases" once a lease time has passed without a renewal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { startTestService, type TestService } from '../support/service.js';

const LEASE_MS = 1_000;
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ leaseMs: LEASE_MS, pool: (db) => createPool(db.url, { max: 3, log: createLogger('silent') }) });
});
afterAll(async () => service?.close());

describe('partition lease renewal', () => {
  it('keeps its slots while every connection of the web pool is taken for longer than a lease', async () => {
    const { api } = await service.newWorkspace();
    const voucher = await api.create('/api/v1/vouchers', { code: `LEASE-${Date.now()}`, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', redemptionLimit: 10 });
    const redeem = () => api.post(`/api/v1/vouchers/${voucher.code}/redemption`, { order: { amount: 1_000, currency: 'EUR' } });
    expect((await redeem()).body).toMatchObject({ ok: true });
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
