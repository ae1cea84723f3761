// A partition: the only writer of its vouchers. Reads that find their state cached are answered at once; everything
// else queues, and the queue is worked in batches: load what is missing, decide every request in arrival order on
// working copies, commit the batch in one transaction (group commit), then update the cache and reply. The next batch
// forms while the previous one commits (up to ENGINE_BATCHES_IN_FLIGHT batches at once). Replies to writes go out only after COMMIT (write-through).
import { uuidv7 } from '../../platform/ids.js';
import { LRUCache } from 'lru-cache';
import { ProblemError } from '../../contract/problems.js';
import {
  decideSingle,
  messageOf,
  orderTotals,
  readsCustomerUses,
  refusalFields,
  validationOutcome,
  type UseContext,
  type VoucherSnapshot,
} from '../../domains/redemptions/redemption.rules.js';
import type { RedemptionOutcome, RollbackOutcome, ValidationOutcome } from '../../domains/redemptions/redemption.schemas.js';
import { sqlState, type Pool } from '../../platform/database.js';
import type { Logger } from '../../platform/logger.js';
import type { CustomerUse, HoldItem, PartitionCall, SnapshotEntry } from '../messages.js';
import { BudgetStates, type Spent } from './budget-states.js';
import { commitPlan, emptyPlan, isEmpty, planBudget, planDelta, planLedger, planRedemption, planUsage, usageKey } from './group-commit.js';
import { loadCustomerUses, loadIdempotencyKeys, loadRedemptions, loadSnapshots, type StoredRedemption, type UsageKey } from './hot-path.sql.js';
import { useContext, voucherKey, VoucherStateCache, type Hold, type HotVoucher } from './voucher-state-cache.js';

export interface PartitionOptions {
  db: Pool;
  log: Logger;
  cacheSize: number;
  cacheTtlMs: number;
  maxBatch: number;
  /** Batches decided or committed at once; more overlap commits, fewer make larger batches (default 1). */
  batchesInFlight?: number;
  now?: () => number;
}

type Reply = (result: unknown) => void;
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
}

type WriteCall = Extract<PartitionCall, { type: 'redeem' | 'rollback' | 'adjust' }>;

const COMMIT_ATTEMPTS = 6;
const HOLD_TIMEOUT_MS = 30_000;
const RECENT_KEYS = 10_000;
/** A request names a voucher code, or a promotion tier (a voucher row of kind TIER): the other kind is not found. */
function ofKind(entry: HotVoucher | undefined, kind: 'CODE' | 'TIER' | undefined): VoucherSnapshot | undefined {
  const v = entry?.snapshot ?? undefined;
  return v && v.kind === (kind ?? 'CODE') ? v : undefined;
}

/** Working copy of what a batch takes from one voucher, before it commits. */
interface Taken {
  uses: number;
  balance: number;
  byCustomer: Map<string, number>;
}

export class PartitionRuntime {
  private readonly cache: VoucherStateCache;
  private readonly queue: Item[] = [];
  /** Batches being decided or committed; the next one forms while these commit. */
  private inFlight = 0;
  private readonly holds = new Map<string, { holds: Hold[]; timer: NodeJS.Timeout }>();
  private readonly recentKeys = new LRUCache<string, { hash: string; response: Record<string, unknown> }>({ max: RECENT_KEYS });
  private readonly budgets: BudgetStates;
  private readonly now: () => number;

  constructor(private readonly options: PartitionOptions) {
    this.cache = new VoucherStateCache(options.cacheSize, options.cacheTtlMs);
    this.budgets = new BudgetStates(options.db);
    this.now = options.now ?? Date.now;
  }

  private readonly counters = { batches: 0, writes: 0, commitMs: 0, retries: 0 };

  /** For /ready and operators: cache fill, queue, and the group-commit figures so far. */
  stats() {
    const { batches, writes, commitMs, retries } = this.counters;
    return {
      cached: this.cache.size,
      queued: this.queue.length,
      holds: this.holds.size,
      batches,
      averageBatch: batches ? Math.round((writes / batches) * 10) / 10 : 0,
      averageCommitMs: batches ? Math.round((commitMs / batches) * 100) / 100 : 0,
      guardRetries: retries,
    };
  }

  /** Entry point of every request from the web thread. */
  handle(call: PartitionCall, reply: Reply, fail: Fail): void {
    try {
      if (this.handleAtOnce(call, reply)) return;
    } catch (error) {
      fail(error);
      return;
    }
    this.queue.push({ call, reply, fail });
    this.kick();
  }

  /** Requests that need no load and no write: answered synchronously. */
  private handleAtOnce(call: PartitionCall, reply: Reply): boolean {
    const now = this.now();
    switch (call.type) {
      case 'ping':
        reply(this.stats());
        return true;
      case 'forget':
        this.forget(call);
        reply(null);
        return true;
      case 'release':
        this.release(call.holdId, call.applied);
        reply(null);
        return true;
      case 'validate': {
        const entry = this.cache.fresh(voucherKey(call.workspaceId, call.code), now);
        if (!entry || !this.ready(entry, call.customer, now)) return false;
        const outcome = this.validate(entry, call, now);
        if (outcome.code === 'campaign_budget_exhausted' && this.budgets.verify(entry.snapshot, now)) return false;
        reply(outcome);
        return true;
      }
      case 'snapshot': {
        const entries = call.codes.map((code) => this.cache.fresh(voucherKey(call.workspaceId, code), now));
        if (entries.some((e) => !e || !this.ready(e, call.customer, now))) return false;
        reply(this.snapshot(call.codes, entries as HotVoucher[], call.customer, now));
        return true;
      }
      case 'hold': {
        const entries = call.items.map((i) => this.cache.fresh(voucherKey(call.workspaceId, i.code), now));
        if (entries.some((e) => !e || !this.ready(e, call.customer, now))) return false;
        reply(this.hold(call.workspaceId, call.holdId, call.items, entries as HotVoucher[], call.customer));
        return true;
      }
      default:
        return false;
    }
  }

  /**
   * What a change elsewhere makes stale. `budgetOf`: a campaign's budget usage (a rollback gave some back). `rules`:
   * every voucher of the workspace (a rule or its time zone changed). A code: its entry (also a "no such voucher"
   * one) and its campaign's budget usage (a stack that failed the budget guard decides on fresh figures next time).
   * A campaign: its vouchers and budget. Neither (codes generated in bulk): every "no such voucher" entry goes.
   */
  private forget(call: Extract<PartitionCall, { type: 'forget' }>): void {
    if (call.budgetOf !== undefined) {
      this.budgets.markStale(call.budgetOf);
    } else if (call.rules) {
      this.cache.markWorkspaceStale(call.workspaceId);
    } else if (call.code !== undefined) {
      const key = voucherKey(call.workspaceId, call.code);
      const campaign = this.cache.peek(key)?.snapshot?.campaign;
      if (campaign) this.budgets.markStale(campaign.id);
      this.cache.markStale(key);
    } else if (call.campaignId !== undefined) {
      this.cache.markCampaignStale(call.workspaceId, call.campaignId);
      this.budgets.drop(call.campaignId);
    } else {
      this.cache.dropMissing(call.workspaceId);
    }
  }

  /** Everything a decision about this entry reads is in memory: the customer's uses and the campaign's budget. */
  private ready(entry: HotVoucher, customer: CustomerUse, now: number): boolean {
    if (!entry.snapshot) return true;
    if (customer.id !== null && readsCustomerUses(entry.snapshot) && !entry.customerUses.has(customer.id)) return false;
    return this.budgets.fresh(entry.snapshot, now);
  }

  /** The use context of a decision: counts, holds and pending takes, the customer's facts, the budget left. */
  private useOf(entry: HotVoucher, customer: CustomerUse, now: number, extra?: { uses: number; balance: number; byCustomer: number }, campaignTaken?: Spent): UseContext {
    const use = useContext(entry, customer.id, customer.given, extra);
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
          const state = sqlState(error);
          // A deadlock (possible only between a batch and a stack over budget rows) undid the statement: decide again.
          if ((state === '40P01' || state === '40001') && !items.some((item) => item.retried)) {
            const again = items.filter((item) => !item.done).map((item) => ({ ...item, retried: true }));
            for (const item of again) this.markItemStale(item.call);
            this.queue.unshift(...again);
            return;
          }
          // A value PostgreSQL refused (data exception, constraint) must not fail the others: each is retried alone.
          if (items.length > 1 && state !== undefined && /^(22|23|54)/.test(state)) {
            const again = items.filter((item) => !item.done).map((item) => ({ ...item, alone: true }));
            this.queue.unshift(...again);
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

  /**
   * The next batch: queued requests in arrival order, up to maxBatch, leaving those of vouchers in flight (their order
   * per voucher is kept: all of a busy voucher's requests wait). A request that must run alone forms its own batch.
   */
  private takeBatch(): Item[] {
    const isFree = (item: Item) => keysOf(item.call).every((key) => !this.busy.has(key));
    const first = this.queue.findIndex(isFree);
    if (first === -1) return [];
    if (this.queue[first]!.alone) return this.queue.splice(first, 1);
    const taken: Item[] = [];
    const kept: Item[] = [];
    const held = new Set<string>();
    for (const item of this.queue) {
      const keys = keysOf(item.call);
      const free = taken.length < this.options.maxBatch && !item.alone && keys.every((key) => !this.busy.has(key) && !held.has(key));
      if (free) taken.push(item);
      else {
        kept.push(item);
        for (const key of keys) held.add(key);
      }
    }
    this.queue.length = 0;
    this.queue.push(...kept);
    return taken;
  }

  private markItemStale(call: PartitionCall): void {
    if ('code' in call && call.type !== 'forget') this.cache.markStale(voucherKey(call.workspaceId, call.code));
  }

  private answer(item: Item, result: unknown): void {
    item.done = true;
    item.reply(result);
  }

  private refuse(item: Item, error: unknown): void {
    item.done = true;
    item.fail(error);
  }

  private async runBatch(items: Item[]): Promise<void> {
    const rollbackRows = await this.loadRollbackTargets(items);
    await this.loadState(items);
    const now = this.now();
    const writes: Item[] = [];
    for (const item of items) {
      const call = item.call;
      const key = (code: string) => voucherKey((call as { workspaceId: string }).workspaceId, code);
      if (call.type === 'validate') this.answer(item, this.validate(this.cache.peek(key(call.code))!, call, now));
      else if (call.type === 'snapshot') this.answer(item, this.snapshot(call.codes, call.codes.map((c) => this.cache.peek(key(c))!), call.customer, now));
      else if (call.type === 'hold') {
        this.answer(item, this.hold(call.workspaceId, call.holdId, call.items, call.items.map((i) => this.cache.peek(key(i.code))!), call.customer));
      } else writes.push(item);
    }
    if (writes.length) await this.commitWrites(writes, rollbackRows);
  }

  /** Loads, in one query each, the vouchers and per-customer counts the batch needs and the cache lacks. */
  private async loadState(items: Item[]): Promise<void> {
    const now = this.now();
    const wanted = new Map<string, { workspaceId: string; code: string }>();
    for (const { call } of items) {
      for (const code of codesOf(call)) {
        const ws = (call as { workspaceId: string }).workspaceId;
        if (!this.cache.fresh(voucherKey(ws, code), now)) wanted.set(voucherKey(ws, code), { workspaceId: ws, code });
      }
    }
    if (wanted.size) {
      const found = await loadSnapshots(this.options.db, [...wanted.values()]);
      const byKey = new Map(found.map((s) => [voucherKey(s.workspaceId, s.code), s]));
      for (const key of wanted.keys()) this.cache.store(key, byKey.get(key) ?? null, now);
    }
    const usage = new Map<string, UsageKey & { entry: HotVoucher }>();
    for (const { call } of items) {
      const customerId = customerOf(call);
      if (!customerId) continue;
      for (const code of codesOf(call)) {
        const entry = this.cache.peek(voucherKey((call as { workspaceId: string }).workspaceId, code));
        if (entry?.snapshot && readsCustomerUses(entry.snapshot) && !entry.customerUses.has(customerId)) {
          usage.set(usageKey(entry.snapshot.id, customerId), { voucherId: entry.snapshot.id, customerId, entry });
        }
      }
    }
    if (usage.size) {
      const counts = await loadCustomerUses(this.options.db, [...usage.values()]);
      for (const u of usage.values()) u.entry.customerUses.set(u.customerId, 0);
      for (const c of counts) usage.get(usageKey(c.voucherId, c.customerId))?.entry.customerUses.set(c.customerId, c.uses);
    }
    await this.budgets.load(this.snapshotsOf(items), now);
  }

  /** The snapshots (in the cache) of the vouchers the items name. */
  private *snapshotsOf(items: Item[]): Iterable<VoucherSnapshot> {
    for (const { call } of items) {
      for (const code of codesOf(call)) {
        const v = this.cache.peek(voucherKey((call as { workspaceId: string }).workspaceId, code))?.snapshot;
        if (v) yield v;
      }
    }
  }

  private async loadRollbackTargets(items: Item[]): Promise<Map<string, StoredRedemption>> {
    const ids = items.flatMap((i) => (i.call.type === 'rollback' ? [i.call.redemptionId] : []));
    const rows = await loadRedemptions(this.options.db, ids);
    return new Map(rows.map((r) => [r.id, r]));
  }

  // ---- reads -------------------------------------------------------------------------------------------------------

  private validate(entry: HotVoucher, call: Extract<PartitionCall, { type: 'validate' }>, now: number): ValidationOutcome {
    const v = ofKind(entry, call.kind);
    const use = v ? this.useOf(entry, call.customer, now) : noUse(call.customer);
    return validationOutcome(v, use, { order: call.order, amount: call.amount }, now);
  }

  private snapshot(codes: string[], entries: HotVoucher[], customer: CustomerUse, now: number): SnapshotEntry[] {
    return codes.map((code, i) => {
      const entry = entries[i]!;
      return {
        code,
        voucher: entry.snapshot,
        use: entry.snapshot ? this.useOf(entry, customer, now) : noUse(customer),
      };
    });
  }

  // ---- stack holds ------------------------------------------------------------------------------------------------

  /** Holds one use (and gift credits) of each voucher for a stack, if the state the stack decided on still holds. */
  private hold(workspaceId: string, holdId: string, items: HoldItem[], entries: HotVoucher[], customer: CustomerUse): { ok: boolean } {
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      const v = entries[i]!.snapshot;
      if (!v || v.id !== item.voucherId || v.configVersion !== item.configVersion || (v.campaign?.version ?? null) !== item.campaignVersion) {
        return { ok: false };
      }
      const use = useContext(entries[i]!, customer.id, customer.given);
      if (v.redemptionLimit !== null && v.redeemedCount + use.heldUses + 1 > v.redemptionLimit) return { ok: false };
      if (v.perCustomerLimit !== null && use.customerUses + 1 > v.perCustomerLimit) return { ok: false };
      if (item.balance > 0 && (v.giftBalance ?? 0) - use.heldBalance < item.balance) return { ok: false };
    }
    const holds: Hold[] = items.map((item, i) => {
      const entry = entries[i]!;
      entry.heldUses += 1;
      entry.heldBalance += item.balance;
      if (customer.id) entry.heldByCustomer.set(customer.id, (entry.heldByCustomer.get(customer.id) ?? 0) + 1);
      return { voucherKey: voucherKey(workspaceId, item.code), uses: 1, balance: item.balance, customerId: customer.id };
    });
    const timer = setTimeout(() => this.release(holdId, false), HOLD_TIMEOUT_MS);
    timer.unref();
    this.holds.set(holdId, { holds, timer });
    return { ok: true };
  }

  private release(holdId: string, applied: boolean): void {
    const held = this.holds.get(holdId);
    if (!held) return;
    clearTimeout(held.timer);
    this.holds.delete(holdId);
    for (const hold of held.holds) {
      const entry = this.cache.peek(hold.voucherKey);
      if (!entry) continue;
      entry.heldUses -= hold.uses;
      entry.heldBalance -= hold.balance;
      if (hold.customerId) decrement(entry.heldByCustomer, hold.customerId, 1);
      // The stack's transaction changed the counters: read them again before the next decision.
      if (applied) entry.stale = true;
    }
  }

  // ---- writes -----------------------------------------------------------------------------------------------------

  private async commitWrites(writes: Item[], rollbackRows: Map<string, StoredRedemption>): Promise<void> {
    let pending = await this.answerReplays(writes);
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt === COMMIT_ATTEMPTS) {
        for (const item of pending) this.refuse(item, new ProblemError('service_unavailable', 'the voucher kept changing; retry', { headers: { 'Retry-After': '1' } }));
        return;
      }
      const { plan, outcomes, taken, touched, campaignTaken } = this.plan(pending, rollbackRows);
      // Refusing for a used-up budget: only on figures just read (others' rollbacks give back), else read and decide again.
      const now = this.now();
      let reread = false;
      for (const item of pending) {
        const outcome = outcomes.get(item) as { code?: string } | undefined;
        if (item.call.type === 'redeem' && outcome?.code === 'campaign_budget_exhausted') {
          reread = this.budgets.verify(this.cache.peek(voucherKey(item.call.workspaceId, item.call.code))?.snapshot, now) || reread;
        }
      }
      if (reread) {
        await this.budgets.load(this.snapshotsOf(pending), now);
        continue;
      }
      this.setPending(taken, +1);
      this.budgets.setPending(campaignTaken, +1);
      let result;
      const started = performance.now();
      try {
        result = isEmpty(plan) ? ({ ok: true, vouchers: [], usage: [] } as const) : await commitPlan(this.options.db, plan);
      } finally {
        this.setPending(taken, -1);
        this.budgets.setPending(campaignTaken, -1);
      }
      this.counters.batches += 1;
      this.counters.writes += pending.length;
      this.counters.commitMs += performance.now() - started;
      if (!result.ok) this.counters.retries += 1;
      if (result.ok) {
        this.applyCommitted(touched, result.vouchers, result.usage);
        this.budgets.applyCommitted(plan.budgets.values(), plan.rollbackIds.length > 0);
        for (const item of pending) {
          const outcome = outcomes.get(item)!;
          if (outcome instanceof Error) this.refuse(item, outcome);
          else this.answer(item, typeof outcome === 'function' ? outcome() : outcome);
          const claim = claimOf(item.call);
          if (claim && !(outcome instanceof Error)) {
            this.recentKeys.set(`${(item.call as WriteCall).workspaceId} ${claim.key}`, { hash: claim.hash, response: outcomes.get(item) as Record<string, unknown> });
          }
        }
        return;
      }
      // Someone else (another partition, process or stack) got there first: reload what was stale, decide again.
      for (const id of result.staleVouchers) this.markVoucherIdStale(pending, id);
      for (const u of result.staleUsage) this.markVoucherIdStale(pending, u.voucherId);
      for (const id of result.staleBudgets) this.budgets.drop(id);
      for (const id of result.racedRollbacks) rollbackRows.delete(id);
      if (result.racedRollbacks.length) {
        for (const row of await loadRedemptions(this.options.db, result.racedRollbacks)) rollbackRows.set(row.id, row);
      }
      if (result.takenKeys.length) pending = await this.answerReplays(pending, new Set(result.takenKeys));
      await this.loadState(pending);
    }
  }

  private markVoucherIdStale(items: Item[], voucherId: string): void {
    for (const item of items) {
      const call = item.call as WriteCall;
      const entry = this.cache.peek(voucherKey(call.workspaceId, call.code));
      if (entry?.snapshot?.id === voucherId) entry.stale = true;
    }
  }

  /**
   * Requests whose idempotency key was used before get the stored outcome (`idempotent: true`) or, for another body,
   * 409. Within one batch, a repeated key waits for the first request's outcome. Returns the requests still to run.
   */
  private async answerReplays(items: Item[], forceLookup?: Set<string>): Promise<Item[]> {
    const lookups: Array<{ workspaceId: string; key: string }> = [];
    for (const item of items) {
      const claim = claimOf(item.call);
      if (!claim) continue;
      const id = `${(item.call as WriteCall).workspaceId} ${claim.key}`;
      if (forceLookup?.has(id) || !this.recentKeys.has(id)) lookups.push({ workspaceId: (item.call as WriteCall).workspaceId, key: claim.key });
    }
    const stored = await loadIdempotencyKeys(this.options.db, lookups);
    for (const s of stored) this.recentKeys.set(`${s.workspaceId} ${s.key}`, { hash: s.requestHash, response: s.response });
    const remaining: Item[] = [];
    const firstOfKey = new Map<string, Item>();
    for (const item of items) {
      const claim = claimOf(item.call);
      if (!claim) {
        remaining.push(item);
        continue;
      }
      const id = `${(item.call as WriteCall).workspaceId} ${claim.key}`;
      const known = this.recentKeys.get(id);
      if (known) {
        this.replay(item, claim.hash, known);
        continue;
      }
      const first = firstOfKey.get(id);
      if (first) {
        // Same key twice in one batch: answer the second from the first once it is known.
        const reply = item.reply;
        const fail = item.fail;
        const answerFirst = first.reply;
        const failFirst = first.fail;
        first.reply = (result) => {
          answerFirst(result);
          this.replay({ ...item, reply, fail }, claim.hash, { hash: claimOf(first.call)!.hash, response: result as Record<string, unknown> });
        };
        first.fail = (error) => {
          failFirst(error);
          fail(error);
        };
        continue;
      }
      firstOfKey.set(id, item);
      remaining.push(item);
    }
    return remaining;
  }

  private replay(item: Item, hash: string, stored: { hash: string; response: Record<string, unknown> }): void {
    if (stored.hash !== hash) {
      this.refuse(item, new ProblemError('idempotency_conflict', 'this idempotency key was used with a different request'));
      return;
    }
    this.answer(item, { ...stored.response, idempotent: true });
  }

  private setPending(taken: Map<HotVoucher, Taken>, sign: 1 | -1): void {
    for (const [entry, t] of taken) {
      entry.pendingUses += sign * t.uses;
      entry.pendingBalance += sign * t.balance;
      for (const [customerId, n] of t.byCustomer) {
        entry.pendingByCustomer.set(customerId, (entry.pendingByCustomer.get(customerId) ?? 0) + sign * n);
      }
    }
  }

  private applyCommitted(touched: Set<HotVoucher>, vouchers: ReadonlyArray<{ id: string; redeemedCount: number; giftBalance: number | null }>, usage: ReadonlyArray<UsageKey & { uses: number }>): void {
    const byId = new Map(vouchers.map((v) => [v.id, v]));
    const usageByVoucher = new Map<string, Array<UsageKey & { uses: number }>>();
    for (const u of usage) usageByVoucher.set(u.voucherId, [...(usageByVoucher.get(u.voucherId) ?? []), u]);
    for (const entry of touched) {
      const v = entry.snapshot;
      if (!v) continue;
      const after = byId.get(v.id);
      if (after) entry.snapshot = { ...v, redeemedCount: after.redeemedCount, giftBalance: after.giftBalance };
      for (const u of usageByVoucher.get(v.id) ?? []) entry.customerUses.set(u.customerId, u.uses);
    }
  }

  /** Decides every write of the batch in order, on working copies; nothing changes in the cache until COMMIT. */
  private plan(items: Item[], rollbackRows: Map<string, StoredRedemption>) {
    const now = this.now();
    const createdAt = new Date(now);
    const plan = emptyPlan();
    const outcomes = new Map<Item, unknown>();
    const taken = new Map<HotVoucher, Taken>();
    const rolledBackHere = new Set<string>();
    const touched = new Set<HotVoucher>();
    // What this batch's redemptions take from each budgeted campaign (every redemption of a batch falls in the same periods).
    const campaignTaken = new Map<string, Spent>();
    const take = (entry: HotVoucher): Taken => {
      let t = taken.get(entry);
      if (!t) taken.set(entry, (t = { uses: 0, balance: 0, byCustomer: new Map() }));
      touched.add(entry);
      return t;
    };

    for (const item of items) {
      const call = item.call as WriteCall;
      const entry = this.cache.peek(voucherKey(call.workspaceId, call.code));
      const v = call.type === 'redeem' ? ofKind(entry, call.kind) : (entry?.snapshot ?? undefined);
      if (call.type === 'redeem') {
        const t = entry && v ? take(entry) : undefined;
        const spent = v?.campaign?.budget ? campaignTaken.get(v.campaign.id) : undefined;
        const use =
          entry && v && t
            ? this.useOf(entry, call.customer, now, { uses: t.uses, balance: t.balance, byCustomer: call.customer.id ? (t.byCustomer.get(call.customer.id) ?? 0) : 0 }, spent)
            : noUse(call.customer);
        const { decision, state } = decideSingle(v, use, { order: call.order, amount: call.amount }, now);
        let outcome: RedemptionOutcome;
        if (!decision.ok) {
          outcome = { ok: false, ...refusalFields(decision) };
        } else {
          const voucher = v!;
          t!.uses += 1;
          if (decision.kind === 'GIFT') t!.balance += decision.amount;
          if (voucher.campaign?.budget) {
            const c = campaignTaken.get(voucher.campaign.id) ?? { uses: 0, amount: 0 };
            campaignTaken.set(voucher.campaign.id, { uses: c.uses + 1, amount: c.amount + decision.amount });
          }
          if (call.customer.id) t!.byCustomer.set(call.customer.id, (t!.byCustomer.get(call.customer.id) ?? 0) + 1);
          const id = planRedemption(plan, {
            voucher,
            kind: decision.kind,
            amount: decision.amount,
            customerId: call.customer.id,
            order: call.order,
            metadata: call.metadata,
            stackId: null,
            createdAt,
          });
          outcome = {
            ok: true,
            redemption: {
              id,
              voucherCode: voucher.code,
              ...(voucher.kind === 'TIER' ? { tierId: voucher.id } : {}),
              amount: decision.amount,
              ...(call.customer.id ? { customerId: call.customer.id } : {}),
              ...(call.order?.id ? { orderId: call.order.id } : {}),
              status: 'SUCCEEDED',
              createdAt: createdAt.toISOString(),
            },
            ...(call.order ? { order: orderTotals(call.order, state) } : {}),
          };
        }
        outcomes.set(item, outcome);
        if (call.idempotency) plan.keys.push({ workspaceId: call.workspaceId, key: call.idempotency.key, requestHash: call.idempotency.hash, response: outcome });
      } else if (call.type === 'rollback') {
        const row = rollbackRows.get(call.redemptionId);
        let outcome: RollbackOutcome | Error;
        if (!row || row.workspaceId !== call.workspaceId) {
          outcome = new ProblemError('not_found', 'no such redemption');
        } else if (row.status === 'ROLLED_BACK' || rolledBackHere.has(row.id)) {
          outcome = { ok: false, code: 'redemption_already_rolled_back', message: messageOf('redemption_already_rolled_back') };
        } else {
          rolledBackHere.add(row.id);
          const rollbackId = uuidv7();
          plan.rollbackIds.push(row.id);
          // A deleted voucher has no counters left to restore; the redemption is still marked rolled back.
          if (entry && v && v.id === row.voucherId) {
            const t = take(entry);
            t.uses -= 1;
            if (row.kind === 'GIFT') t.balance -= row.amount;
            planDelta(plan, v, -1, row.kind === 'GIFT' ? row.amount : 0);
            if (row.campaignId === v.campaignId) planBudget(plan, v, row.createdAt.getTime(), -1, row.amount);
            if (row.kind === 'GIFT') planLedger(plan, v, { type: 'ROLLBACK', amount: row.amount, redemptionId: row.id }, createdAt);
          }
          if (row.customerId && v && v.id === row.voucherId) planUsage(plan, v, row.customerId, -1);
          plan.rollbacks.push({ workspaceId: call.workspaceId, id: rollbackId, redemptionId: row.id, voucherCode: row.voucherCode, amount: row.amount, reason: call.reason ?? null, createdAt });
          plan.events.push({
            workspaceId: call.workspaceId,
            type: 'voucher.redeemed.rolled_back',
            payload: { rollbackId, redemptionId: row.id, voucherCode: row.voucherCode, amount: row.amount },
          });
          outcome = { ok: true, rollback: { id: rollbackId, redemptionId: row.id, voucherCode: row.voucherCode, amount: row.amount, createdAt: createdAt.toISOString() } };
        }
        outcomes.set(item, outcome);
        if (call.idempotency && !(outcome instanceof Error)) {
          plan.keys.push({ workspaceId: call.workspaceId, key: call.idempotency.key, requestHash: call.idempotency.hash, response: outcome });
        }
      } else {
        // adjust: a top-up (CREDITS_ADDED) or a signed correction (ADJUSTMENT) of a gift card.
        if (!entry || !v) {
          outcomes.set(item, new ProblemError('not_found', 'no such voucher'));
          continue;
        }
        if (v.type !== 'GIFT_CARD') {
          outcomes.set(item, new ProblemError('invalid_request', 'only gift cards have a balance'));
          continue;
        }
        if (call.entryType === 'CREDITS_ADDED' && call.amount < 0) {
          outcomes.set(item, new ProblemError('invalid_request', 'CREDITS_ADDED takes a positive amount; use ADJUSTMENT to take credits away'));
          continue;
        }
        const t = take(entry);
        const available = (v.giftBalance ?? 0) - entry.heldBalance - entry.pendingBalance - t.balance;
        if (available + call.amount < 0) {
          outcomes.set(item, new ProblemError('conflict', `the balance would fall below 0 (it is ${available})`));
          continue;
        }
        t.balance -= call.amount;
        planDelta(plan, v, 0, call.amount);
        const row = planLedger(plan, v, { type: call.entryType, amount: call.amount, redemptionId: null }, createdAt);
        outcomes.set(item, () => ({
          code: v.code,
          balance: row.balanceAfter,
          entry: { id: row.id, type: row.type, amount: row.amount, balanceAfter: row.balanceAfter, createdAt: createdAt.toISOString() },
        }));
      }
    }
    return { plan, outcomes, taken, touched, campaignTaken };
  }
}

function noUse(customer: CustomerUse): UseContext {
  return { customerId: customer.id, customerGiven: customer.given, customerUses: 0, heldUses: 0, heldBalance: 0 };
}

function decrement(map: Map<string, number>, key: string, by: number): void {
  const left = (map.get(key) ?? 0) - by;
  if (left > 0) map.set(key, left);
  else map.delete(key);
}

function codesOf(call: PartitionCall): string[] {
  switch (call.type) {
    case 'validate':
    case 'redeem':
    case 'rollback':
    case 'adjust':
      return [call.code];
    case 'snapshot':
      return call.codes;
    case 'hold':
      return call.items.map((i) => i.code);
    default:
      return [];
  }
}

function keysOf(call: PartitionCall): string[] {
  return 'workspaceId' in call ? codesOf(call).map((code) => voucherKey(call.workspaceId, code)) : [];
}

function customerOf(call: PartitionCall): string | null {
  return 'customer' in call ? call.customer.id : null;
}

function claimOf(call: PartitionCall) {
  return call.type === 'redeem' || call.type === 'rollback' ? call.idempotency : undefined;
}

