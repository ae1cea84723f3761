// The redemption engine's façade: P partition threads, each the single writer of the vouchers that hash to it, and
// the stack coordinator. Handlers reach it only through the RedemptionEngine interface (contract/engine-port.ts).
import type { RedemptionEngine } from '../contract/engine-port.js';
import type { BalanceOutcome, RedemptionOutcome, RollbackOutcome, ValidationOutcome } from '../domains/redemptions/redemption.schemas.js';
import type { Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';
import { validationOutcome } from '../domains/redemptions/redemption.rules.js';
import { PartitionRouter } from './partition-router.js';
import { loadTierSnapshots } from './partition/hot-path.sql.js';
import { RefusalCounts } from './partition/refusal-counts.js';
import { StackRedemption } from './stack/stack-redemption.js';

const STACK_WRITER = -1;

export interface EngineOptions {
  databaseUrl: string;
  /** The web thread's pool: stack transactions and idempotency lookups. */
  db: Pool;
  partitions: number;
  cacheSize: number;
  cacheTtlMs: number;
  maxBatch: number;
  /** Batches a partition decides or commits at once (default 1). */
  batchesInFlight?: number;
  /** Add every batch's figures to the insights rollup in its commit statement (default true; INSIGHTS_ROLLUP). */
  insightsRollup?: boolean;
  log: Logger;
  logLevel: string;
}

export async function startRedemptionEngine(options: EngineOptions): Promise<RedemptionEngine> {
  const router = new PartitionRouter(
    {
      databaseUrl: options.databaseUrl,
      poolSize: 4,
      cacheSize: options.cacheSize,
      cacheTtlMs: options.cacheTtlMs,
      maxBatch: options.maxBatch,
      batchesInFlight: options.batchesInFlight ?? 1,
      insightsRollup: options.insightsRollup ?? true,
      logLevel: options.logLevel,
    },
    options.partitions,
    options.log,
  );
  await router.started();
  // The web thread's stack coordinator is writer -1 of the insight rows: partitions are 0..P-1.
  const refusals = new RefusalCounts(options.db, STACK_WRITER, options.log);
  const stacks = new StackRedemption(options.db, router, { rollup: options.insightsRollup === false ? 'off' : { writer: STACK_WRITER }, refusals });
  const route = (workspaceId: string, code: string) => router.route(workspaceId, code);

  return {
    validate: (r) => router.call<ValidationOutcome>(route(r.workspaceId, r.code), { type: 'validate', ...r }),
    async validateMany({ workspaceId, codes, kind, order, customer }) {
      const byCode = await router.snapshots(workspaceId, codes, customer);
      const now = Date.now();
      return codes.map((code) => {
        const entry = byCode.get(code)!;
        const voucher = entry.voucher && entry.voucher.kind === (kind ?? 'CODE') ? entry.voucher : undefined;
        return validationOutcome(voucher, entry.use, { order }, now);
      });
    },
    redeem: (r) => router.call<RedemptionOutcome>(route(r.workspaceId, r.code), { type: 'redeem', ...r }),
    async rollback({ campaignId, ...r }) {
      const outcome = await router.call<RollbackOutcome>(route(r.workspaceId, r.code), { type: 'rollback', ...r });
      // The use given back counts in every partition's view of the campaign budget at once, not after its TTL.
      if (outcome.ok && campaignId) await router.broadcast({ type: 'forget', workspaceId: r.workspaceId, budgetOf: campaignId });
      return outcome;
    },
    redeemStack: (r) => stacks.redeem(r),
    async releaseSession(r) {
      await router.call(route(r.workspaceId, r.code), { type: 'releaseSession', ...r });
    },
    adjustBalance: (r) => router.call<BalanceOutcome>(route(r.workspaceId, r.code), { type: 'adjust', ...r }),
    async voucherChanged(workspaceId, code) {
      // A code lives (and is known missing) only in the partition it hashes to; bulk generation reaches them all.
      if (code === undefined) await router.broadcast({ type: 'forget', workspaceId });
      else await router.call(route(workspaceId, code), { type: 'forget', workspaceId, code });
    },
    async campaignChanged(workspaceId, campaignId) {
      await router.broadcast({ type: 'forget', workspaceId, campaignId });
    },
    async rulesChanged(workspaceId) {
      await router.broadcast({ type: 'forget', workspaceId, rules: true });
    },
    tierSnapshots: (workspaceId) => loadTierSnapshots(options.db, workspaceId),
    check: () => router.check(2_000),
    async stop() {
      await Promise.all([router.stop(), refusals.stop().catch(() => undefined)]);
    },
  };
}
