// Measurement, not a regular test (runs with LOYALTY_BENCH=1, under `flock /tmp/bench.lock`): spends of points through
// the guarded row-locked SQL write against gift-card spends through the engine's partitions, on one hot card and
// spread over 50 cards, over real HTTP in one run; and the worker's earning throughput with 10 ORDER_PAID rules.
import { describe, expect, it } from 'vitest';
import { reactToNextEvent } from '../../src/domains/loyalty/index.js';
import { startTestService } from '../support/service.js';
import { createCustomer, createProgram, expectLedgerMatchesCaches, joinMember } from './support.js';

const REQUESTS = 3_000;
const CONCURRENCY = 50;

async function run(count: number, concurrency: number, call: (i: number) => Promise<boolean>): Promise<{ perSecond: number; ok: number }> {
  let next = 0;
  let ok = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        if (await call(i)) ok++;
      }
    }),
  );
  return { perSecond: Math.round((count / (performance.now() - started)) * 1000), ok };
}

describe.skipIf(!process.env.LOYALTY_BENCH)('loyalty throughput', () => {
  it('spends points (row lock) and gift credits (engine), one hot card and 50 cards', async () => {
    const service = await startTestService();
    try {
      const { api } = await service.newWorkspace();
      const programId = await createProgram(api);
      const members = await Promise.all(Array.from({ length: 50 }, () => joinMember(api, programId)));
      for (const m of members) await api.post(`/api/v1/loyalty/members/${m.id}/points`, { points: 1_000_000 });
      for (let i = 0; i < 50; i++) await api.create('/api/v1/vouchers', { code: `GIFT-${i}`, type: 'GIFT_CARD', gift: { amount: 1_000_000, currency: 'EUR' } });
      const spendPoints = (memberId: string) => async () => (await api.post(`/api/v1/loyalty/members/${memberId}/points`, { points: -1 })).body.ok === true;
      const spendGift = (code: string) => async () => (await api.post(`/api/v1/vouchers/${code}/redemption`, { amount: 1 })).body.ok === true;
      // Warm-up of both paths.
      await run(300, CONCURRENCY, spendPoints(members[0]!.id));
      await run(300, CONCURRENCY, spendGift('GIFT-0'));
      const figures = {
        pointsHot: await run(REQUESTS, CONCURRENCY, spendPoints(members[1]!.id)),
        giftHot: await run(REQUESTS, CONCURRENCY, spendGift('GIFT-1')),
        pointsSpread: await run(REQUESTS, CONCURRENCY, (i) => spendPoints(members[i % 50]!.id)()),
        giftSpread: await run(REQUESTS, CONCURRENCY, (i) => spendGift(`GIFT-${i % 50}`)()),
      };
      console.log('LOYALTY_BENCH spends/s', JSON.stringify(figures));
      for (const f of Object.values(figures)) expect(f.ok).toBe(REQUESTS);
      await expectLedgerMatchesCaches(service.pool);
    } finally {
      await service.close();
    }
  }, 300_000);

  it('earns through the worker: order.paid events per second with 10 rules', async () => {
    const service = await startTestService();
    try {
      const { api } = await service.newWorkspace();
      const programId = await createProgram(api);
      for (let i = 0; i < 10; i++) {
        await api.create(`/api/v1/loyalty/programs/${programId}/earning-rules`, { name: `r${i}`, trigger: 'ORDER_PAID', points: { type: 'PER_AMOUNT', every: 100, points: 1 } });
      }
      const customers = await Promise.all(Array.from({ length: 50 }, () => createCustomer(api)));
      const ORDERS = 400;
      const payOrders = () =>
        run(ORDERS, 20, async (i) => {
          const order = await api.create('/api/v1/orders', { amount: 10_000, currency: 'EUR', customer: { id: customers[i % 50] } });
          return (await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' })).status === 200;
        });
      const figures: Record<string, number> = {};
      for (const loops of [1, 4]) {
        await payOrders();
        const pending = (await service.pool.query('SELECT count(*)::int AS n FROM loyalty_event_inbox')).rows[0].n;
        const started = performance.now();
        await Promise.all(
          Array.from({ length: loops }, async () => {
            while (await reactToNextEvent(service.pool));
          }),
        );
        figures[`loops${loops}`] = Math.round((pending / (performance.now() - started)) * 1000);
      }
      console.log('LOYALTY_BENCH order.paid events/s (10 rules)', JSON.stringify(figures));
      const earned = await service.pool.query('SELECT count(*)::int AS n FROM loyalty_earnings');
      expect(earned.rows[0].n).toBe(2 * ORDERS * 10);
      await expectLedgerMatchesCaches(service.pool);
    } finally {
      await service.close();
    }
  }, 300_000);
});
