// The redemption engine's façade: P partition threads, each the single writer of the vouchers that hash to it, and
// the stack coordinator. Handlers reach it only through the RedemptionEngine interface (contract/engine-port.ts).
import type { RedemptionEngine } from '../contract/engine-port.js';
import type { BalanceOutcome, RedemptionOutcome, RollbackOutcome, ValidationOutcome } from '../contract/checkout.schemas.js';
import { createPool, type Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';
import type { ZoneCalendar } from '../contract/zone-calendar.js';
import { effectivePriority, isExclusive, validationOutcome } from '../checkout/redemption.rules.js';
import { listenForNotifications } from '../platform/notifications.js';
import { LinkClient, startLinkServer } from './leases/engine-link.js';
import { loadEngineSecret } from './leases/lease.sql.js';
import { PartitionLeases } from './leases/partition-leases.js';
import type { PartitionCall } from './messages.js';
import { PartitionRouter } from './partition-router.js';
import { loadTierSnapshots } from './partition/hot-path.sql.js';
import { RefusalCounts } from './partition/refusal-counts.js';
import { isCustomerUnresolved } from './partition/batch-customers.js';
import { StackRedemption } from './stack/stack-redemption.js';
import { bestStack, previewStack } from './stack/stack-preview.js';

const STACK_WRITER = -1;
/** Changes every member's partitions must hear of (a campaign, codes generated in bulk, a budget given back). */
const ENGINE_CHANNEL = 'engine_changes';

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
  /** The web thread's calendar (stack and tier decisions made here); each partition thread builds its own. */
  calendar: ZoneCalendar;
  /** Partition leases last this long unless renewed (default 5,000 ms; PARTITION_LEASE_MS). */
  leaseMs?: number;
  /** Where this member answers calls forwarded by the others (ENGINE_HOST, ENGINE_PORT, ENGINE_ADVERTISE_HOST). */
  link?: { host: string; port: number; advertiseHost?: string | undefined };
  /** A stop that comes during the start: the start then stops what it has started (the leases given up) and rejects. */
  signal?: AbortSignal | undefined;
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
  const leaseMs = options.leaseMs ?? 5_000;
  const secret = await loadEngineSecret(options.db);
  const linkHost = options.link?.host ?? '127.0.0.1';
  const server = await startLinkServer({
    host: linkHost,
    port: options.link?.port ?? 0,
    advertiseHost: options.link?.advertiseHost ?? (linkHost === '0.0.0.0' || linkHost === '::' ? '127.0.0.1' : linkHost),
    secret,
    log: options.log,
    serve: (slot, call) => router.serve(slot, call),
  });
  const link = new LinkClient(secret);
  // The leases' own connections: renewing them never waits behind the web thread's requests in its pool, so a process
  // under a flash sale (its pool queue seconds long) does not lose its slots to the others; queries every third of the
  // lease time.
  const leaseDb = createPool(options.databaseUrl, { max: 2, log: options.log });
  const leases = new PartitionLeases({
    db: leaseDb,
    log: options.log,
    leaseMs,
    url: server.url,
    onChange: (gained) => void router.gained(gained.map(([slot]) => slot)),
  });
  router.attach(leases, link, leaseMs);
  // What every member's partitions must forget: done here at once, and told to the others. Called after a change has
  // committed, so it never throws (a committed write answered as a failure would be retried into a conflict): a thread
  // that cannot be told drops the entry at its TTL (ENGINE_CACHE_TTL_MS), or at the next lease it gains.
  const everywhere = async (call: PartitionCall) => {
    await router.broadcast(call).catch((error: unknown) => {
      options.log.warn({ err: (error as Error).message }, 'a partition thread of this process could not be told of a change');
    });
    await options.db.query('SELECT pg_notify($1, $2)', [ENGINE_CHANNEL, JSON.stringify({ from: leases.memberId, call })]).catch((error: unknown) => {
      options.log.warn({ err: (error as Error).message }, 'telling the other members of a change failed (their caches expire on their own)');
    });
  };
  const changes = listenForNotifications(options.databaseUrl, options.log, {
    [ENGINE_CHANNEL]: (payload) => {
      try {
        const { from, call } = JSON.parse(payload) as { from: string; call: PartitionCall };
        if (from !== leases.memberId && (call.type === 'forget' || call.type === 'forgetAll')) void router.broadcast(call).catch(() => undefined);
      } catch {
        // not ours
      }
    },
  });
  // The web thread's stack coordinator is writer -1 of the insight rows: partitions are 0..P-1.
  const refusals = new RefusalCounts(options.db, STACK_WRITER, options.log);
  const stacks = new StackRedemption(options.db, router, options.calendar, { rollup: options.insightsRollup === false ? 'off' : { writer: STACK_WRITER }, refusals });
  const route = (workspaceId: string, code: string) => router.route(workspaceId, code);
  const stop = async () => {
    // The leases first, so the others take the slots at their next tick; forwarded calls in flight still finish.
    await leases.stop();
    await leaseDb.end().catch(() => undefined);
    await server.close();
    link.close();
    await Promise.all([router.stop(), refusals.stop().catch(() => undefined), changes.stop()]);
  };
  if (!options.signal?.aborted) await leases.start(options.signal);
  if (options.signal?.aborted) {
    await stop();
    options.signal.throwIfAborted();
  }

  return {
    validate: (r) => router.call<ValidationOutcome>(route(r.workspaceId, r.code), { type: 'validate', ...r }),
    async validateMany({ workspaceId, codes, kind, order, customer }) {
      const byCode = await router.snapshots(workspaceId, codes, customer);
      const now = Date.now();
      return codes.map((code) => {
        const entry = byCode.get(code)!;
        const voucher = entry.voucher && entry.voucher.kind === (kind ?? 'CODE') ? entry.voucher : undefined;
        return {
          outcome: validationOutcome(voucher, entry.use, { order }, now, options.calendar),
          priority: voucher ? effectivePriority(voucher) : 0,
          exclusive: voucher ? isExclusive(voucher) : false,
        };
      });
    },
    async redeem({ customer, ...r }) {
      if (!('resolve' in customer)) return router.call<RedemptionOutcome>(route(r.workspaceId, r.code), { type: 'redeem', ...r, customer });
      // Found or created by the batch that decides it; where that batch cannot, resolved here and sent once more.
      const answer = await router.call<RedemptionOutcome>(route(r.workspaceId, r.code), { type: 'redeem', ...r, customer: { id: null, given: true, find: customer.find } });
      if (!isCustomerUnresolved(answer)) return answer;
      return router.call<RedemptionOutcome>(route(r.workspaceId, r.code), { type: 'redeem', ...r, customer: await customer.resolve() });
    },
    async rollback({ campaignId, ...r }) {
      const outcome = await router.call<RollbackOutcome>(route(r.workspaceId, r.code), { type: 'rollback', ...r });
      // The use given back counts in every partition's view of the campaign budget at once, not after its TTL.
      if (outcome.ok && campaignId) await everywhere({ type: 'forget', workspaceId: r.workspaceId, budgetOf: campaignId });
      return outcome;
    },
    redeemStack: (r) => stacks.redeem(r),
    previewStack: (r) => previewStack(router, options.calendar, r),
    bestStack: (r) => bestStack(router, options.calendar, r),
    async releaseSession(r) {
      await router.call(route(r.workspaceId, r.code), { type: 'releaseSession', ...r });
    },
    adjustBalance: (r) => router.call<BalanceOutcome>(route(r.workspaceId, r.code), { type: 'adjust', ...r }),
    async voucherChanged(workspaceId, code) {
      // A code lives (and is known missing) only in the partition it hashes to; bulk generation reaches them all.
      if (code === undefined) return everywhere({ type: 'forget', workspaceId });
      const forget = { type: 'forget', workspaceId, code } as const;
      // Its holder forgets it before the change is answered, so the next decision anywhere reads it. The change is
      // committed already: a holder that cannot be reached (this process's leases lapsed, the holder gone) is no
      // failure of the write. Every member is told instead, and a lease gained later starts from what is committed.
      await router.call(route(workspaceId, code), forget).catch(async (error: unknown) => {
        options.log.warn({ err: (error as Error).message, code }, 'the partition holding a changed voucher could not be told; every member is told instead');
        await everywhere(forget);
      });
    },
    async campaignChanged(workspaceId, campaignId) {
      await everywhere({ type: 'forget', workspaceId, campaignId });
    },
    async rulesChanged(workspaceId) {
      // Every member hears of a rule change on the rules channel itself (web-service.ts): this process's threads only.
      await router.broadcast({ type: 'forget', workspaceId, rules: true }).catch((error: unknown) => {
        options.log.warn({ err: (error as Error).message }, 'a partition thread of this process could not be told of a rule change');
      });
    },
    tierSnapshots: (workspaceId) => loadTierSnapshots(options.db, workspaceId),
    check: () => router.check(2_000),
    figures: () => router.figures(2_000),
    stop,
  };
}
