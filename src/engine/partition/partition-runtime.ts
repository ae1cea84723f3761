// A partition: the only writer of its vouchers. Reads that find their state cached are answered at once; everything
// else queues, and the queue is worked in batches: load what is missing, decide every request in arrival order on
// working copies, commit the batch in one transaction (group commit), then update the cache and reply. The next batch
// forms while the previous one commits (up to ENGINE_BATCHES_IN_FLIGHT batches at once). Replies to writes go out only after COMMIT (write-through).
// Each batch's insight figures commit in its statement; the refusals it answers are counted and written every 2 s.
import { ProblemError } from '../../contract/problems.js';
import { readsCustomerUses, validationOutcome, type Reserved, type UseContext, type VoucherSnapshot } from '../../checkout/redemption.rules.js';
import type { StackOutcome, ValidationOutcome } from '../../contract/checkout.schemas.js';
import type { Pool, Sql } from '../../platform/database.js';
import { KeyedQueue } from '../../platform/keyed-queue.js';
import type { Logger } from '../../platform/logger.js';
import type { ZoneCalendar } from '../../contract/zone-calendar.js';
import { PARTITION_MOVED, type CustomerUse, type FencedCall, type PartitionCall, type Refused, type SnapshotEntry } from '../messages.js';
import { BudgetStates, type Spent } from './budget-states.js';
import { PlanWriter } from './group-commit.js';
import { isEmpty, usageKey } from './write-plan.js';
import { loadRedemptions, pruneExpiredSessions, type StoredRedemption } from './hot-path.sql.js';
import { cachedSnapshots, loadBatchState, loadRollbackTargets } from './batch-state.js';
import { IdempotencyReplays } from './idempotency-replays.js';
import { StackHolds } from './stack-holds.js';
import { applyCommitted, setPending } from './committed-state.js';
import { codesOf, customerOf, keysOf } from './partition-calls.js';
import { countRefusal, countStackRefusal, RefusalCounts } from './refusal-counts.js';
import { retriesAfter, takeBatch } from './batch-queue.js';
import { forgetStale, markVoucherStale } from './stale-marks.js';
import { noUse, ofKind, useContext, voucherKey, VoucherStateCache, type HotVoucher } from './voucher-state-cache.js';
import { anyTraced, epochMs, PartitionFigures, type BatchTiming } from './partition-figures.js';
import { planWrites, type WriteCall } from './write-planner.js';
import { BatchCustomers, CUSTOMER_UNRESOLVED, namesCustomerToFind, type BatchCustomerFinder } from './batch-customers.js';

export interface PartitionOptions {
  db: Pool;
  log: Logger;
  cacheSize: number;
  cacheTtlMs: number;
  maxBatch: number;
  /** Batches decided or committed at once; more overlap commits, fewer make larger batches (default 1). */
  batchesInFlight?: number;
  /** This partition's number: the writer of its insight rows (default 0). */
  partition?: number;
  /** Add each batch's figures to the insights rollup in its commit statement (default true). */
  insightsRollup?: boolean;
  /** The thread's calendar: one per partition thread, built at its root (workers/partition.ts). */
  calendar: ZoneCalendar;
  /** Finds or creates the customers redemptions name by sourceId alone (none: each is answered CUSTOMER_UNRESOLVED). */
  customers?: BatchCustomerFinder | undefined;
  /** How long a batch waits for its customers' statement before it sends them back (default CUSTOMERS_WAIT_MS, batch-customers.ts). */
  customersWaitMs?: number;
  now?: () => number;
}

type Reply = (result: unknown, timing?: BatchTiming) => void;
type Fail = (error: unknown) => void;

interface Item {
  call: PartitionCall;
  reply: Reply;
  fail: Fail;
  done?: boolean;
  /** Decided in a batch of its own (after its batch failed on a value PostgreSQL refused). */
  alone?: boolean;
  /** Already retried once after a deadlock. */
  retried?: boolean;
  /** A traced request's batch times, sent with its answer. */
  timing?: BatchTiming;
}

const COMMIT_ATTEMPTS = 6;
/** Attempts decided on the cache before a batch decides under its vouchers' row locks (commitWrites). */
const OPTIMISTIC_ATTEMPTS = 2;

/** How an attempt of a batch's writes ended: decide again (these), written (do this after COMMIT), or every item answered. */
type Attempt = { pending: Item[] } | { committed: () => void } | 'answered';
/** Expired validation sessions are deleted every ~10 minutes (spread over partitions and processes), 1,000 at a time. */
const SESSION_SWEEP_MS = 10 * 60_000;
const SESSION_SWEEP_BATCH = 1_000;

export class PartitionRuntime {
  private readonly cache: VoucherStateCache;
  private readonly queue: Item[] = [];
  /** Batches being decided or committed; the next one forms while these commit. */
  private inFlight = 0;
  /** A kick() is queued (as a microtask) for the calls of the message being read. */
  private kickQueued = false;
  private readonly holds: StackHolds;
  private readonly replays: IdempotencyReplays<Item>;
  private readonly budgets: BudgetStates;
  private readonly refusals: RefusalCounts;
  private readonly writer: PlanWriter;
  private readonly customers: BatchCustomers;
  /** Locked attempts (attemptUnderLocks), one at a time. */
  private readonly lockedAttempts = new KeyedQueue();
  private readonly now: () => number;

  constructor(private readonly options: PartitionOptions) {
    this.cache = new VoucherStateCache(options.cacheSize, options.cacheTtlMs);
    this.budgets = new BudgetStates(options.db, options.calendar);
    this.customers = new BatchCustomers(options.db, options.customers, options.log, options.customersWaitMs);
    this.writer = new PlanWriter(options.db, options.insightsRollup === false ? 'off' : { writer: options.partition ?? 0 });
    this.now = options.now ?? Date.now;
    this.refusals = new RefusalCounts(options.db, options.partition ?? 0, options.log);
    this.holds = new StackHolds((key) => this.cache.peek(key), (key) => this.busy.has(key));
    this.replays = new IdempotencyReplays(options.db, (item, result) => this.answer(item, result), (item, error) => this.refuse(item, error));
    setInterval(() => void this.sweepSessions(), SESSION_SWEEP_MS * (0.5 + Math.random())).unref();
  }

  /** Expired sessions hold nothing (every decision and the SQL guard ignore them); this only keeps the table small. */
  private async sweepSessions(): Promise<void> {
    try {
      while ((await pruneExpiredSessions(this.options.db, SESSION_SWEEP_BATCH)) === SESSION_SWEEP_BATCH);
    } catch (error) {
      this.options.log.warn({ err: (error as Error).message }, 'pruning expired validation sessions failed');
    }
  }

  private readonly figures = new PartitionFigures();

  /** For /ready and operators: cache fill, queue, and the group-commit figures so far. */
  stats() {
    return { cached: this.cache.size, queued: this.queue.length, holds: this.holds.size, ...this.figures.averages() };
  }

  /** Entry point of every request from the web thread. */
  handle(call: FencedCall, reply: Reply, fail: Fail): void {
    try {
      if (this.handleAtOnce(call, reply)) return;
    } catch (error) {
      fail(error);
      return;
    }
    this.queue.push({ call, reply, fail });
    // After the current message's other calls have queued too (they arrive together): they can share a batch.
    if (!this.kickQueued) {
      this.kickQueued = true;
      queueMicrotask(() => {
        this.kickQueued = false;
        this.kick();
      });
    }
  }

  /** Requests that need no load and no write: answered synchronously. */
  private handleAtOnce(call: PartitionCall, reply: Reply): boolean {
    const now = this.now();
    switch (call.type) {
      case 'ping':
        reply(this.stats());
        return true;
      case 'figures':
        reply(this.figures.snapshot({ queued: this.queue.length, holds: this.holds.size, cached: this.cache.size }, this.options.db));
        return true;
      case 'flush':
        void this.refusals.flush().then(() => reply(null));
        return true;
      case 'forget':
        forgetStale(this.cache, this.budgets, call);
        reply(null);
        return true;
      case 'forgetAll':
        this.cache.markAllStale();
        reply(null);
        return true;
      case 'release':
        this.holds.release(call.holdId, call.applied);
        reply(null);
        return true;
      case 'validate': {
        // With a session it reserves: a write, decided and committed in a batch like a redemption.
        if (call.session) return false;
        const entry = this.cache.fresh(voucherKey(call.workspaceId, call.code), now);
        if (!entry || !this.ready(entry, call.customer, now)) return false;
        const outcome = this.validate(entry, call, now);
        if (!outcome.valid && outcome.code === 'campaign_budget_exhausted' && this.budgets.verify(entry.snapshot, now)) return false;
        this.countRefusal(call, outcome, now);
        reply(outcome);
        return true;
      }
      case 'snapshot': {
        const entries = call.codes.map((code) => this.cache.fresh(voucherKey(call.workspaceId, code), now));
        if (entries.some((e) => !e || !this.ready(e, call.customer, now))) return false;
        reply(this.snapshot(call, entries as HotVoucher[], now));
        return true;
      }
      case 'hold': {
        const entries = call.items.map((i) => this.cache.fresh(voucherKey(call.workspaceId, i.code), now));
        if (entries.some((e) => !e || !this.ready(e, call.customer, now))) return false;
        reply(this.fencedHold(call, entries as HotVoucher[], now));
        return true;
      }
      default:
        return false;
    }
  }

  /** A hold answers with the lease it was granted under: the stack's commit checks that lease is still current. */
  private fencedHold(call: Extract<PartitionCall, { type: 'hold' }>, entries: HotVoucher[], now: number) {
    const fence = (call as FencedCall).fence;
    return { ...this.holds.hold(call, entries, now), ...(fence ? { fence } : {}) };
  }

  /** Everything a decision about this entry reads is in memory: the customer's uses and the campaign's budget. */
  private ready(entry: HotVoucher, customer: CustomerUse, now: number): boolean {
    if (!entry.snapshot) return true;
    if (customer.id !== null && readsCustomerUses(entry.snapshot) && !entry.customerUses.has(customer.id)) return false;
    return this.budgets.fresh(entry.snapshot, now);
  }

  /** The use context of a decision: counts, holds, pending takes, others' reservations, the customer's facts, the budget left. */
  private useOf(entry: HotVoucher, customer: CustomerUse, now: number, reserved: Reserved, extra?: { uses: number; balance: number; byCustomer: number }, campaignTaken?: Spent): UseContext {
    const use = useContext(entry, customer.id, customer.given, extra, reserved);
    use.facts = customer.facts;
    use.budget = this.budgets.left(entry.snapshot!, now, campaignTaken);
    return use;
  }

  /** Vouchers of the batches in flight: the next batch leaves them alone, so a hot code's requests gather into one
   * large batch while its previous one commits, and batches of other codes overlap their commits with it. */
  private readonly busy = new Map<string, number>();

  private kick(): void {
    while (this.inFlight < (this.options.batchesInFlight ?? 1) && this.queue.length) {
      const items = this.takeBatch();
      if (items.length === 0) return;
      this.inFlight += 1;
      const keys = items.flatMap((item) => keysOf(item.call));
      for (const key of keys) this.busy.set(key, (this.busy.get(key) ?? 0) + 1);
      this.runBatch(items)
        .catch((error: unknown) => {
          const again = retriesAfter(items, error);
          if (again) {
            if (again.stale) for (const item of again.items) this.markItemStale(item.call);
            this.queue.unshift(...again.items);
            return;
          }
          for (const item of items) if (!item.done) item.fail(error);
          // What the failed batch decided on may be out of date: decide the next ones on reloaded state.
          for (const item of items) this.markItemStale(item.call);
          this.options.log.error({ err: error }, 'partition batch failed');
        })
        .finally(() => {
          this.inFlight -= 1;
          for (const key of keys) {
            const left = (this.busy.get(key) ?? 1) - 1;
            if (left > 0) this.busy.set(key, left);
            else this.busy.delete(key);
          }
          this.kick();
        });
    }
  }

  /** The next batch (batch-queue.ts): in arrival order, up to maxBatch, none of a voucher in flight. */
  private takeBatch(): Item[] {
    return takeBatch(this.queue, this.busy, this.options.maxBatch);
  }

  private markItemStale(call: PartitionCall): void {
    for (const key of keysOf(call)) this.cache.markStale(key);
  }

  private answer(item: Item, result: unknown): void {
    item.done = true;
    item.reply(result, item.timing);
  }

  /** A refusal naming fields travels as a result (a thread's error reply holds no fields); the router rethrows it. */
  private refuse(item: Item, error: unknown): void {
    item.done = true;
    if (error instanceof ProblemError && error.errors?.length) {
      const refused: Refused = { refused: { problem: error.code, detail: error.message, errors: error.errors } };
      item.reply(refused);
    } else item.fail(error);
  }

  private async runBatch(batch: Item[]): Promise<void> {
    const startedAt = epochMs();
    const items = await this.findCustomers(batch);
    const rollbackRows = await loadRollbackTargets(this.options.db, items.map((i) => i.call));
    await this.loadState(items);
    const now = this.now();
    const writes: Item[] = [];
    for (const item of items) {
      const call = item.call;
      const key = (code: string) => voucherKey((call as { workspaceId: string }).workspaceId, code);
      if (call.type === 'validate' && !call.session) {
        const outcome = this.validate(this.cache.peek(key(call.code))!, call, now);
        this.countRefusal(call, outcome, now);
        this.answer(item, outcome);
      }
      else if (call.type === 'snapshot') this.answer(item, this.snapshot(call, call.codes.map((c) => this.cache.peek(key(c))!), now));
      else if (call.type === 'hold') {
        this.answer(item, this.fencedHold(call, call.items.map((i) => this.cache.peek(key(i.code))!), now));
      } else writes.push(item);
    }
    if (writes.length) await this.commitWrites(writes, rollbackRows, startedAt);
  }

  /**
   * The customers the batch's redemptions name by sourceId alone (batch-customers.ts), set on their calls; those not
   * answered are answered CUSTOMER_UNRESOLVED (resolved on the web thread, sent again). The items left to decide.
   */
  private async findCustomers(items: Item[]): Promise<Item[]> {
    const finding = items.flatMap((item) => (namesCustomerToFind(item.call) ? [{ item, call: item.call }] : []));
    if (finding.length === 0) return items;
    const found = await this.customers.find(finding.map((f) => f.call));
    for (const { item, call } of finding) {
      const customer = found.get(call);
      if (customer) item.call = { ...call, customer };
      else this.answer(item, CUSTOMER_UNRESOLVED);
    }
    return items.filter((item) => !item.done);
  }

  /** The state the batch needs and the cache lacks (batch-state.ts), read before it is decided. */
  private async loadState(items: Item[]): Promise<void> {
    await loadBatchState({ db: this.options.db, cache: this.cache, budgets: this.budgets }, items.map((i) => i.call), this.now());
  }

  private snapshotsOf(items: Item[]): Iterable<VoucherSnapshot> {
    return cachedSnapshots(this.cache, items.map((i) => i.call));
  }

  private validate(entry: HotVoucher, call: Extract<PartitionCall, { type: 'validate' }>, now: number): ValidationOutcome {
    const v = ofKind(entry, call.kind);
    const use = v ? this.useOf(entry, call.customer, now, entry.sessions.reserved(now)) : noUse(call.customer);
    return validationOutcome(v, use, { order: call.order, amount: call.amount }, now, this.options.calendar);
  }

  /** For a stack: an entry's own session (by code) does not count its own reservation as taken. */
  private snapshot(call: Extract<PartitionCall, { type: 'snapshot' }>, entries: HotVoucher[], now: number): SnapshotEntry[] {
    return call.codes.map((code, i) => {
      const entry = entries[i]!;
      const reserved = entry.sessions.reserved(now, call.sessions?.[code]);
      return { code, voucher: entry.snapshot, use: entry.snapshot ? this.useOf(entry, call.customer, now, reserved) : noUse(call.customer) };
    });
  }

  /**
   * Decides and commits the batch's writes. The first attempts are optimistic (decided on the cache, guarded in the
   * statement); a batch whose vouchers keep changing under it (writers outside the engine: a loyalty card's points
   * adjusted or transferred, an order returned) then decides under their row locks, read anew, so that a stream of such
   * writes cannot starve it into a 503.
   */
  private async commitWrites(writes: Item[], rollbackRows: Map<string, StoredRedemption>, startedAt: number): Promise<void> {
    let pending = await this.replays.answer(writes);
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt === COMMIT_ATTEMPTS) {
        for (const item of pending) this.refuse(item, new ProblemError('service_unavailable', 'the voucher kept changing; retry', { headers: { 'Retry-After': '1' } }));
        return;
      }
      const step =
        attempt < OPTIMISTIC_ATTEMPTS
          ? await this.attemptCommit(pending, rollbackRows, startedAt, attempt)
          : await this.attemptUnderLocks(pending, rollbackRows, startedAt, attempt);
      if (step === 'answered') return;
      if ('committed' in step) {
        step.committed();
        return;
      }
      pending = step.pending;
    }
  }

  /**
   * One at a time per partition: the transaction holds a connection while the attempt reads a few things beside it
   * (budgets, keys, rollbacks) through the pool, so batches in flight (ENGINE_BATCHES_IN_FLIGHT, up to 16, on a pool
   * of 4) must not all hold one and wait for another.
   */
  private attemptUnderLocks(pending: Item[], rollbackRows: Map<string, StoredRedemption>, startedAt: number, attempt: number): Promise<Attempt> {
    const ids = [...new Set([...this.snapshotsOf(pending)].map((s) => s.id))];
    return this.lockedAttempts.run('locked', () =>
      this.writer.underLocks(ids, async (tx) => {
        for (const item of pending) for (const key of keysOf(item.call)) this.cache.markStale(key);
        await loadBatchState({ db: tx, cache: this.cache, budgets: this.budgets }, pending.map((i) => i.call), this.now());
        return this.attemptCommit(pending, rollbackRows, startedAt, attempt, tx);
      }),
    );
  }

  /**
   * One decision of the pending writes and its commit. `locked`: the transaction holding their vouchers' rows, which the
   * plan is written in; what a commit changes in memory and the answers wait for that transaction's COMMIT (`committed`).
   */
  private async attemptCommit(pending: Item[], rollbackRows: Map<string, StoredRedemption>, startedAt: number, attempt: number, locked?: Sql): Promise<Attempt> {
    const now = this.now();
    const { plan, outcomes: decided, taken, touched, campaignTaken, sessions } = planWrites(pending.map((item) => item.call as WriteCall), rollbackRows, {
      now,
      calendar: this.options.calendar,
      entryOf: (workspaceId, code) => this.cache.peek(voucherKey(workspaceId, code)),
      useOf: (entry, customer, extra, spent, reserved) => this.useOf(entry, customer, now, reserved, extra, spent),
    });
    const outcomes = new Map(pending.map((item, i) => [item, decided[i]]));
    // Refusing for a used-up budget: only on figures just read (others' rollbacks give back), else read and decide again.
    let reread = false;
    for (const item of pending) {
      const outcome = outcomes.get(item) as { code?: string } | undefined;
      if ((item.call.type === 'redeem' || item.call.type === 'validate' || item.call.type === 'stack') && outcome?.code === 'campaign_budget_exhausted') {
        for (const key of keysOf(item.call)) reread = this.budgets.verify(this.cache.peek(key)?.snapshot, now) || reread;
      }
    }
    if (reread) {
      await this.budgets.load(this.snapshotsOf(pending), now);
      return { pending };
    }
    for (const item of pending) {
      const { fence, fences } = item.call as FencedCall;
      for (const f of fences ?? (fence ? [fence] : [])) plan.fences.add(`${f[0]}:${f[1]}`);
    }
    const reserving = sessions.added(now);
    setPending(taken, reserving, +1);
    this.budgets.setPending(campaignTaken, +1);
    let result;
    const started = performance.now();
    const statement = !isEmpty(plan);
    try {
      result = statement ? await this.writer.commit(plan, locked) : ({ ok: true, vouchers: [], usage: [] } as const);
    } finally {
      setPending(taken, reserving, -1);
      this.budgets.setPending(campaignTaken, -1);
    }
    const commitMs = performance.now() - started;
    this.figures.committed(pending.length, commitMs, { ok: result.ok, statement });
    if (result.ok) {
      const written = result;
      return {
        committed: () => {
          if (anyTraced(pending)) {
            const committedAt = epochMs();
            const timing = { startedAt, commitStartedAt: committedAt - commitMs, committedAt, writes: pending.length, attempts: attempt + 1 };
            for (const item of pending) if ((item.call as FencedCall).trace) item.timing = timing;
          }
          applyCommitted(touched, written.vouchers, written.usage, sessions);
          this.budgets.applyCommitted(plan.budgets.values(), plan.rollbackIds.length > 0);
          for (const item of pending) {
            const outcome = outcomes.get(item)!;
            if (outcome instanceof Error) this.refuse(item, outcome);
            else this.answer(item, typeof outcome === 'function' ? outcome() : outcome);
            if (item.call.type === 'redeem' || item.call.type === 'validate') this.countRefusal(item.call, outcome, now);
            if (item.call.type === 'stack') this.countStackRefusal(item.call, outcome as StackOutcome, now);
            if (!(outcome instanceof Error)) this.replays.remember(item.call, outcome);
          }
        },
      };
    }
    if (result.fenced) {
      // This process no longer holds a lease the batch was decided under: nothing was written; the web thread asks
      // the new owner. What is cached here may change under that owner, so it is read again should the lease return.
      this.cache.markAllStale();
      for (const item of pending) this.refuse(item, new ProblemError('service_unavailable', PARTITION_MOVED, { headers: { 'Retry-After': '1' } }));
      return 'answered';
    }
    // Someone else (another partition, process or stack) got there first: reload what was stale, decide again.
    for (const id of result.staleVouchers) this.markVoucherIdStale(pending, id);
    for (const u of result.staleUsage) this.markVoucherIdStale(pending, u.voucherId);
    for (const id of result.staleBudgets) this.budgets.drop(id);
    for (const id of result.racedRollbacks) rollbackRows.delete(id);
    if (result.racedRollbacks.length) {
      for (const row of await loadRedemptions(this.options.db, result.racedRollbacks)) rollbackRows.set(row.id, row);
    }
    let next = pending;
    if (result.takenKeys.length) next = await this.replays.answer(pending, new Set(result.takenKeys));
    // A locked attempt reads again under its own locks; an optimistic one reads now.
    if (!locked && attempt + 1 < OPTIMISTIC_ATTEMPTS) await this.loadState(next);
    return { pending: next };
  }

  private countRefusal(call: { type: string; workspaceId: string; code: string }, outcome: unknown, now: number): void {
    countRefusal(this.refusals, this.cache, call, outcome, now);
  }

  private countStackRefusal(call: Extract<PartitionCall, { type: 'stack' }>, outcome: StackOutcome, now: number): void {
    countStackRefusal(this.refusals, this.cache, call, outcome, now);
  }

  private markVoucherIdStale(items: Item[], voucherId: string): void {
    markVoucherStale(this.cache, items.map((i) => i.call), voucherId);
  }
}
