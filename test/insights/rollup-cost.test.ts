// What the insights rollup adds to the engine's commit statement, measured without HTTP: the same batches (a hot code's
// redemptions with their events) committed alternately with and without the rollup part, on one connection, without
// waiting for the WAL flush (synchronous_commit off: the flush is the same for both and would hide the difference). A
// measurement, not a check of behaviour: it runs only with INSIGHTS_BENCH=1 (hold /tmp/bench.lock meanwhile).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommitStatements } from '../../src/engine/partition/batch-commit.sql.js';
import type { BatchWrites, RedemptionRow, RollupDelta } from '../../src/engine/partition/batch-writes.js';
import { startTestService, type TestService } from '../support/service.js';

const statements = new CommitStatements();

const enabled = process.env.INSIGHTS_BENCH === '1';

let service: TestService;
beforeAll(async () => {
  if (enabled) service = await startTestService();
}, 60_000);
afterAll(async () => service?.close());

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('insights rollup cost in the commit statement', () => {
  it.skipIf(!enabled)('adds little to a batch commit', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const code = `COST-${randomUUID().slice(0, 8)}`;
    const voucher = await api.create('/api/v1/vouchers', { code, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
    const client = await service.pool.connect();
    const lines: string[] = [];
    await client.query('SET synchronous_commit = off');
    try {
      for (const size of [1, 20, 200]) {
        const timings = { on: [] as number[], off: [] as number[] };
        for (let i = 0; i < 1_200; i++) {
          const on = i % 2 === 1;
          const { rows } = await client.query('SELECT config_version FROM vouchers WHERE id = $1', [voucher.id]);
          const createdAt = new Date();
          const redemptions: RedemptionRow[] = Array.from({ length: size }, () => ({
            workspaceId, id: randomUUID(), voucherId: voucher.id, voucherCode: code, campaignId: null, amount: 100, kind: 'DISCOUNT',
            customerId: null, orderId: null, orderAmount: 1_000, currency: 'EUR', stackId: null, metadata: {}, createdAt,
            points: null, pointsEntryId: null,
          }));
          const rollup: RollupDelta = { workspaceId, campaignId: null, currency: 'EUR', hour: new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000), redemptions: size, discountAmount: 100 * size, giftAmount: 0, rollbacks: 0, rolledBackDiscount: 0, rolledBackGift: 0 };
          const writes: BatchWrites = {
            keys: [], rollbackIds: [], usage: [], usageLimits: [], rollbacks: [], ledger: [], budgets: [], sessions: [],
            deltas: [{ id: voucher.id, uses: size, balance: 0, points: 0, configVersion: rows[0].config_version, campaignVersion: null }],
            redemptions,
            events: redemptions.map((r) => ({ workspaceId, type: 'voucher.redeemed', payload: { redemptionId: r.id, voucherCode: code, amount: 100 } })),
            ...(on ? { rollups: [rollup], writer: 0 } : {}),
          };
          const started = performance.now();
          const result = await statements.commit(client, writes);
          const ms = performance.now() - started;
          expect(result.ok).toBe(true);
          if (i >= 100) timings[on ? 'on' : 'off'].push(ms);
        }
        const on = median(timings.on);
        const off = median(timings.off);
        // Each commit with the rollup against the one without right before it: a drift of the machine cancels out.
        const paired = median(timings.on.map((ms, i) => ms - timings.off[i]!));
        lines.push(
          `batch of ${size}: median ${on.toFixed(3)} ms with the rollup, ${off.toFixed(3)} ms without; ` +
            `median of paired differences ${(paired * 1000).toFixed(0)} µs (${((paired / off) * 100).toFixed(1)} %)`,
        );
      }
    } finally {
      await client.query('RESET synchronous_commit');
      client.release();
    }
    console.info(lines.join('\n'));
  }, 300_000);
});
