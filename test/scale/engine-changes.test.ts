// A change made through one web process reaches the partitions of another at once, not after the cache's 30 s: a
// campaign switched off through the first process is refused by the second, which holds the code's slot and had the
// voucher cached (the change travels by NOTIFY engine_changes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionOf } from '../../src/engine/partition-router.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/until.js';

let first: TestService;
let second: TestService;
beforeAll(async () => {
  first = await startTestService();
  second = await startTestService({ database: first.db });
  // The first process releases half of the slots at its next tick; the second takes them.
  await until(async () => ((await second.engine.check()).leases as { owned: number[] }).owned.length === 32, 20_000, 'the second process holding 32 slots');
}, 60_000);
afterAll(async () => {
  await second?.close();
  await first?.close();
});

describe('changes between web processes', () => {
  it('refuses a voucher at its owner as soon as its campaign is switched off through the other process', async () => {
    const { api, key, workspaceId } = await first.newWorkspace();
    const campaign = await api.create('/api/v1/campaigns', {
      name: 'switched off', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 } },
    });
    const { codes } = (await api.post(`/api/v1/campaigns/${campaign.id}/vouchers/generate`, { count: 40 })).body as { codes: string[] };
    const owned = new Set(((await second.engine.check()).leases as { owned: number[] }).owned);
    const code = codes.find((c) => owned.has(partitionOf(workspaceId, c, 64)))!;
    const order = { order: { amount: 1_000, currency: 'EUR' } };
    const viaSecond = second.api(key);
    // Cached by its owner, the second process.
    expect((await viaSecond.post(`/api/v1/vouchers/${code}/validate`, order)).body).toMatchObject({ valid: true });
    expect((await api.patch(`/api/v1/campaigns/${campaign.id}`, { active: false })).status).toBe(200);
    const started = Date.now();
    await until(async () => (await viaSecond.post(`/api/v1/vouchers/${code}/validate`, order)).body.code === 'campaign_inactive', 5_000, 'the refusal at the owner');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
