// What a partition knows of its campaigns' budgets: the usage of each limited period as last read, and what its batch
// in commit takes. Other partitions and processes spend the same budgets, so the figures are read again after
// BUDGET_TTL_MS, and a refusal is made only on figures read within BUDGET_VERIFY_MS. The SQL guard in the commit
// statement is what holds the budget; these figures only keep decisions close to it.
import { LRUCache } from 'lru-cache';
import { budgetLimits } from '../../domains/campaigns/campaign-budget.rules.js';
import type { ZoneCalendar } from '../../contract/zone-calendar.js';
import type { BudgetLeft, VoucherSnapshot } from '../../checkout/redemption.rules.js';
import type { Sql } from '../../platform/database.js';
import type { BudgetDelta } from './batch-writes.js';
import { loadBudgetUsage } from './hot-path.sql.js';

const BUDGET_TTL_MS = 1_000;
const BUDGET_VERIFY_MS = 100;

export interface Spent {
  uses: number;
  amount: number;
}

interface BudgetState {
  loadedAt: number;
  stale: boolean;
  used: Map<string, Spent>;
  /** Taken by the batch being committed right now. */
  pending: Spent;
}

export class BudgetStates {
  private readonly states = new LRUCache<string, BudgetState>({ max: 10_000 });

  /** How often each campaign's budget was marked stale: a load compares it before and after its read. */
  private readonly marks = new Map<string, number>();

  constructor(
    private readonly db: Sql,
    private readonly calendar: ZoneCalendar,
  ) {}

  /** The budget periods a decision at `now` counts in, with their limits. */
  private limitsNow(v: VoucherSnapshot, now: number) {
    return v.campaign?.budget ? budgetLimits(v.campaign.budget, this.calendar.budgetPeriods(now, v.timeZone)) : [];
  }

  /** Whether a decision on this voucher can be made on what is in memory (no budget, or fresh figures). */
  fresh(v: VoucherSnapshot, now: number): boolean {
    if (!v.campaign?.budget) return true;
    const state = this.states.get(v.campaign.id);
    if (!state || state.stale || now - state.loadedAt > BUDGET_TTL_MS) return false;
    return this.limitsNow(v, now).every((l) => state.used.has(l.period));
  }

  /** Marks a budget read too long ago to refuse on as stale (it is read again first); true when it did. */
  verify(v: VoucherSnapshot | null | undefined, now: number): boolean {
    const state = v?.campaign ? this.states.get(v.campaign.id) : undefined;
    if (!state || now - state.loadedAt <= BUDGET_VERIFY_MS) return false;
    state.stale = true;
    return true;
  }

  markStale(campaignId: string): void {
    const state = this.states.get(campaignId);
    if (state) state.stale = true;
    this.marks.set(campaignId, (this.marks.get(campaignId) ?? 0) + 1);
  }

  drop(campaignId: string): void {
    this.states.delete(campaignId);
    this.marks.set(campaignId, (this.marks.get(campaignId) ?? 0) + 1);
  }

  /** What is left in the tightest period, after the batch in commit and `taken` by earlier requests of this batch. */
  left(v: VoucherSnapshot, now: number, taken?: Spent): BudgetLeft | undefined {
    if (!v.campaign?.budget) return undefined;
    const state = this.states.get(v.campaign.id);
    const left: BudgetLeft = { uses: null, amount: null };
    for (const { period, limit } of this.limitsNow(v, now)) {
      const used = state?.used.get(period) ?? { uses: 0, amount: 0 };
      const spentUses = used.uses + (state?.pending.uses ?? 0) + (taken?.uses ?? 0);
      const spentAmount = used.amount + (state?.pending.amount ?? 0) + (taken?.amount ?? 0);
      if (limit.redemptions !== undefined) left.uses = Math.min(left.uses ?? Infinity, limit.redemptions - spentUses);
      if (limit.discountAmount !== undefined) left.amount = Math.min(left.amount ?? Infinity, limit.discountAmount - spentAmount);
    }
    return left;
  }

  /** Reads, in one query, the usage of the budgeted campaigns of these vouchers whose figures are not fresh. */
  async load(vouchers: Iterable<VoucherSnapshot>, now: number): Promise<void> {
    const wanted = new Map<string, VoucherSnapshot>();
    for (const v of vouchers) if (v.campaign?.budget && !this.fresh(v, now)) wanted.set(v.campaign.id, v);
    if (wanted.size === 0) return;
    const periods = new Set<string>();
    for (const v of wanted.values()) for (const l of this.limitsNow(v, now)) periods.add(l.period);
    // A mark that lands while the figures are read (a rollback elsewhere) must survive them: they may predate it.
    const marksBefore = new Map([...wanted.keys()].map((id) => [id, this.marks.get(id) ?? 0]));
    const rows = await loadBudgetUsage(this.db, [...wanted.keys()], [...periods]);
    for (const [campaignId, v] of wanted) {
      const used = new Map(this.limitsNow(v, now).map((l): [string, Spent] => [l.period, { uses: 0, amount: 0 }]));
      for (const r of rows) if (r.campaignId === campaignId && used.has(r.period)) used.set(r.period, { uses: r.uses, amount: r.amount });
      const previous = this.states.get(campaignId);
      const markedMeanwhile = (this.marks.get(campaignId) ?? 0) !== marksBefore.get(campaignId);
      this.states.set(campaignId, { loadedAt: now, stale: markedMeanwhile, used, pending: previous?.pending ?? { uses: 0, amount: 0 } });
    }
  }

  /** Adds (+1) or removes (-1) what a batch takes while it commits. */
  setPending(taken: ReadonlyMap<string, Spent>, sign: 1 | -1): void {
    for (const [campaignId, t] of taken) {
      const state = this.states.get(campaignId);
      if (!state) continue;
      state.pending.uses += sign * t.uses;
      state.pending.amount += sign * t.amount;
    }
  }

  /** After COMMIT: what the batch added is now used. A rollback (an older period, perhaps) makes us read them again. */
  applyCommitted(deltas: Iterable<BudgetDelta>, hadRollbacks: boolean): void {
    for (const d of deltas) {
      const state = this.states.get(d.campaignId);
      if (!state) continue;
      if (hadRollbacks) {
        state.stale = true;
        continue;
      }
      const used = state.used.get(d.period);
      if (used) state.used.set(d.period, { uses: used.uses + d.uses, amount: used.amount + d.amount });
    }
  }
}
