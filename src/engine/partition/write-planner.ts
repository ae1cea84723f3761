// Decides a batch's writes in arrival order, on working copies (nothing in the cache changes until COMMIT): what each
// request gets, and the one plan that writes them all. Redemptions, rollbacks, gift balance adjustments, and validation
// sessions: a validation with a session reserves, a redemption with it consumes, a release ends it.
import { invalidField, ProblemError } from '../../contract/problems.js';
import { uuidv7 } from '../../platform/ids.js';
import {
  balanceTaken,
  decideSingle,
  messageOf,
  orderTotals,
  refusalFields,
  validationOutcome,
  type Grant,
  type Reserved,
  type UseContext,
  type VoucherSnapshot,
} from '../../checkout/redemption.rules.js';
import { evaluateStack, type StackEntry } from '../../checkout/stack.rules.js';
import { MAX_AMOUNT, type RedemptionOutcome, type RollbackOutcome, type StackOutcome, type ValidationOutcome } from '../../contract/checkout.schemas.js';
import type { CustomerUse, PartitionCall, SessionOpening } from '../messages.js';
import type { ZoneCalendar } from '../../contract/zone-calendar.js';
import type { Spent } from './budget-states.js';
import {
  emptyPlan,
  planBudget,
  planDelta,
  planLedger,
  planRedemption,
  planRollback,
  planSession,
  planStackEvent,
  planUsage,
  type RedemptionDraft,
  type WritePlan,
} from './write-plan.js';
import type { StoredRedemption } from './hot-path.sql.js';
import { RETURN_REASON } from '../../contract/engine-port.js';
import { SessionChanges } from './session-reservations.js';
import { noUse, ofKind, type HotVoucher } from './voucher-state-cache.js';

type Call<T extends PartitionCall['type']> = Extract<PartitionCall, { type: T }>;
export type SessionValidation = Call<'validate'> & { session: SessionOpening };
export type WriteCall = Call<'redeem' | 'rollback' | 'adjust' | 'releaseSession' | 'stack'> | SessionValidation;

/** Working copy of what a batch takes from one voucher, before it commits. */
export interface Taken {
  uses: number;
  balance: number;
  byCustomer: Map<string, number>;
}

export interface PlannerContext {
  now: number;
  calendar: ZoneCalendar;
  entryOf(workspaceId: string, code: string): HotVoucher | undefined;
  /** A decision's use context: counts, holds, pending and batch takes, reservations of others, facts, budget left. */
  useOf(entry: HotVoucher, customer: CustomerUse, extra: { uses: number; balance: number; byCustomer: number }, campaignTaken: Spent | undefined, reserved: Reserved): UseContext;
}

/**
 * Per request: its outcome, a ProblemError, or (adjustments) a function giving the outcome once COMMIT settled the
 * ledger balances.
 */
export interface BatchPlan {
  plan: WritePlan;
  outcomes: unknown[];
  taken: Map<HotVoucher, Taken>;
  touched: Set<HotVoucher>;
  /** What the batch's redemptions take from each budgeted campaign (all of a batch fall in the same periods). */
  campaignTaken: Map<string, Spent>;
  sessions: SessionChanges<HotVoucher>;
}

/** What a gift redemption's rollback gives back: its credits less what partial returns of its order gave back. */
const giftBack = (row: StoredRedemption) => row.amount - row.returnedCredit;

export function planWrites(calls: readonly WriteCall[], rollbackRows: ReadonlyMap<string, StoredRedemption>, ctx: PlannerContext): BatchPlan {
  const planner = new BatchPlanner(rollbackRows, ctx);
  const outcomes = calls.map((call) => planner.decide(call));
  return { plan: planner.plan, outcomes, taken: planner.taken, touched: planner.touched, campaignTaken: planner.campaignTaken, sessions: planner.sessions };
}

class BatchPlanner {
  readonly plan = emptyPlan();
  readonly taken = new Map<HotVoucher, Taken>();
  readonly touched = new Set<HotVoucher>();
  readonly campaignTaken = new Map<string, Spent>();
  readonly sessions = new SessionChanges<HotVoucher>();
  private readonly rolledBackHere = new Set<string>();
  /** `program customer` of the referral conversions this batch makes: one per referee and program. */
  private readonly convertedHere = new Set<string>();
  private readonly createdAt: Date;

  constructor(
    private readonly rollbackRows: ReadonlyMap<string, StoredRedemption>,
    private readonly ctx: PlannerContext,
  ) {
    this.createdAt = new Date(ctx.now);
  }

  decide(call: WriteCall): unknown {
    switch (call.type) {
      case 'redeem':
        return this.redeem(call);
      case 'validate':
        return this.validate(call);
      case 'rollback':
        return this.rollback(call);
      case 'adjust':
        return this.adjust(call);
      case 'releaseSession':
        return this.releaseSession(call);
      case 'stack':
        return this.stack(call);
    }
  }

  private take(entry: HotVoucher): Taken {
    let t = this.taken.get(entry);
    if (!t) this.taken.set(entry, (t = { uses: 0, balance: 0, byCustomer: new Map() }));
    this.touched.add(entry);
    return t;
  }

  /** The use context of a decision on `entry` after this batch's earlier decisions; `own`: the caller's session. */
  private useOf(entry: HotVoucher, customer: CustomerUse, own: string | undefined): UseContext {
    const t = this.take(entry);
    const campaign = entry.snapshot?.campaign;
    const spent = campaign?.budget ? this.campaignTaken.get(campaign.id) : undefined;
    const byCustomer = customer.id ? (t.byCustomer.get(customer.id) ?? 0) : 0;
    const use = this.ctx.useOf(entry, customer, { uses: t.uses, balance: t.balance, byCustomer }, spent, this.sessions.reserved(entry, this.ctx.now, own));
    const referral = entry.snapshot?.referral;
    if (referral && customer.id && this.convertedHere.has(`${referral.programId} ${customer.id}`)) {
      use.referee = { hasPaidOrder: use.referee?.hasPaidOrder ?? false, referred: true };
    }
    return use;
  }

  private redeem(call: Call<'redeem'>): RedemptionOutcome {
    const now = this.ctx.now;
    const entry = this.ctx.entryOf(call.workspaceId, call.code);
    const v = ofKind(entry, call.kind);
    // A live reservation of the caller's session is its own: not counted against it, and consumed when it redeems.
    const own = call.session && entry && v && this.sessions.get(entry, call.session.key, now) ? call.session.key : undefined;
    const use = entry && v ? this.useOf(entry, call.customer, own) : noUse(call.customer);
    const { decision, state } = decideSingle(v, use, { order: call.order, amount: call.amount }, now, this.ctx.calendar);
    let outcome: RedemptionOutcome;
    if (!decision.ok) {
      outcome = { ok: false, ...refusalFields(decision) };
    } else {
      const voucher = v!;
      const id = this.use(entry!, voucher, decision, call.customer, own, { order: call.order, metadata: call.metadata, stackId: null });
      outcome = {
        ok: true,
        redemption: {
          id,
          voucherCode: voucher.code,
          ...(voucher.kind === 'TIER' ? { tierId: voucher.id } : {}),
          amount: decision.amount,
          ...(decision.kind === 'POINTS' && decision.points > 0 ? { points: decision.points } : {}),
          ...(call.customer.id ? { customerId: call.customer.id } : {}),
          ...(call.order?.id ? { orderId: call.order.id } : {}),
          status: 'SUCCEEDED',
          createdAt: this.createdAt.toISOString(),
        },
        ...(call.order ? { order: orderTotals(call.order, state) } : {}),
      };
    }
    if (call.idempotency) this.plan.keys.push({ workspaceId: call.workspaceId, key: call.idempotency.key, requestHash: call.idempotency.hash, response: outcome });
    return outcome;
  }

  /**
   * One use of a voucher granted `grant`: taken from the batch's working copies (counts, credits, the customer's
   * uses, the campaign's budget, a referee's conversion), the caller's own session consumed, the redemption planned.
   */
  private use(entry: HotVoucher, voucher: VoucherSnapshot, grant: Grant, customer: CustomerUse, own: string | undefined, row: Pick<RedemptionDraft, 'order' | 'metadata' | 'stackId'>): string {
    const t = this.take(entry);
    t.uses += 1;
    t.balance += balanceTaken(grant);
    if (voucher.campaign?.budget) {
      const c = this.campaignTaken.get(voucher.campaign.id) ?? { uses: 0, amount: 0 };
      this.campaignTaken.set(voucher.campaign.id, { uses: c.uses + 1, amount: c.amount + grant.amount });
    }
    if (customer.id) t.byCustomer.set(customer.id, (t.byCustomer.get(customer.id) ?? 0) + 1);
    if (voucher.referral && customer.id) this.convertedHere.add(`${voucher.referral.programId} ${customer.id}`);
    if (own !== undefined) {
      this.sessions.set(entry, own, null);
      planSession(this.plan, voucher, own, null);
    }
    return planRedemption(this.plan, this.ctx.calendar, {
      voucher,
      kind: grant.kind,
      amount: grant.amount,
      points: grant.kind === 'POINTS' ? grant.points : undefined,
      itemDiscounts: grant.kind === 'DISCOUNT' ? grant.itemDiscounts : undefined,
      customerId: customer.id,
      ...row,
      createdAt: this.createdAt,
    });
  }

  /**
   * A stack whose vouchers are all this partition's: evaluated on the batch's working copies (after the batch's earlier
   * decisions, with others' holds and reservations counted), then every member used, or none. Atomic like the
   * cross-partition stack (stack-redemption.ts): its rows, the stack event and its key commit with the batch or not at
   * all. A refusal stores its key too.
   */
  private stack(call: Call<'stack'>): StackOutcome {
    const now = this.ctx.now;
    const owned = call.vouchers.map((item) => {
      const entry = this.ctx.entryOf(call.workspaceId, item.code);
      const v = ofKind(entry, item.tierId !== undefined ? 'TIER' : 'CODE');
      const own = item.session && entry && v && this.sessions.get(entry, item.session.key, now) ? item.session.key : undefined;
      return { entry, v, own };
    });
    const entries: StackEntry[] = call.vouchers.map((item, i) => {
      const { entry, v, own } = owned[i]!;
      return { code: item.code, tierId: item.tierId, amount: item.amount, voucher: v, use: entry && v ? this.useOf(entry, call.customer, own) : noUse(call.customer) };
    });
    const evaluation = evaluateStack(entries, call.order, call.stackLimit, now, this.ctx.calendar);
    const key = (outcome: StackOutcome) => this.plan.keys.push({ workspaceId: call.workspaceId, key: call.idempotency.key, requestHash: call.idempotency.hash, response: outcome });
    if (!evaluation.ok) {
      const outcome: StackOutcome = { ok: false, ...refusalFields(evaluation.failure!), results: evaluation.results };
      key(outcome);
      return outcome;
    }
    const stackId = uuidv7();
    const results = [...evaluation.results];
    for (const member of evaluation.members) {
      const { entry, own } = owned[member.index]!;
      const redemptionId = this.use(entry!, member.voucher, member.grant, call.customer, own, { order: call.order, metadata: call.metadata, stackId });
      results[member.index] = { ...results[member.index]!, redemptionId };
    }
    planStackEvent(this.plan, call.workspaceId, stackId, results);
    const outcome: StackOutcome = { ok: true, stackId, results, order: orderTotals(call.order, evaluation.state) };
    key(outcome);
    return outcome;
  }

  /** A validation with a session: a valid answer reserves the use (and the gift credits it grants) for the key. */
  private validate(call: SessionValidation): ValidationOutcome {
    const now = this.ctx.now;
    const entry = this.ctx.entryOf(call.workspaceId, call.code);
    const v = ofKind(entry, call.kind);
    const { key, ttlSeconds } = call.session;
    // Its own reservation is not counted: validating again refreshes it, never reserves twice.
    const use = entry && v ? this.useOf(entry, call.customer, key) : noUse(call.customer);
    const outcome = validationOutcome(v, use, { order: call.order, amount: call.amount }, now, this.ctx.calendar);
    if (!outcome.valid) return outcome;
    // What the session reserves of the balance, in the voucher's unit: gift credits, or the points that would pay.
    const reserved = v!.type === 'GIFT_CARD' ? (outcome.discount?.amount ?? 0) : v!.type === 'LOYALTY_CARD' ? (outcome.discount?.points ?? 0) : 0;
    const reservation = { amount: reserved, expiresAt: now + ttlSeconds * 1000 };
    this.sessions.set(entry!, key, reservation);
    planSession(this.plan, v!, key, reservation);
    return { ...outcome, session: { key, expiresAt: new Date(reservation.expiresAt).toISOString() } };
  }

  private releaseSession(call: Call<'releaseSession'>): { released: true } | ProblemError {
    const entry = this.ctx.entryOf(call.workspaceId, call.code);
    const v = ofKind(entry, 'CODE');
    if (!entry || !v) return new ProblemError('not_found', 'no such voucher');
    const reservation = this.sessions.get(entry, call.key, this.ctx.now);
    if (!reservation) return new ProblemError('not_found', 'no live session with this key for this voucher');
    this.sessions.set(entry, call.key, null);
    planSession(this.plan, v, call.key, null);
    this.plan.audited.push({ kind: 'sessionRelease', trail: call.audit, voucherId: v.id, code: v.code, session: { key: call.key, ...reservation } });
    return { released: true };
  }

  private rollback(call: Call<'rollback'>): RollbackOutcome | ProblemError {
    const entry = this.ctx.entryOf(call.workspaceId, call.code);
    const v = entry?.snapshot ?? undefined;
    const row = this.rollbackRows.get(call.redemptionId);
    let outcome: RollbackOutcome | ProblemError;
    if (!row || row.workspaceId !== call.workspaceId) {
      outcome = new ProblemError('not_found', 'no such redemption');
    } else if (row.status === 'ROLLED_BACK' || this.rolledBackHere.has(row.id)) {
      outcome = { ok: false, code: 'redemption_already_rolled_back', message: messageOf('redemption_already_rolled_back') };
    } else if (row.kind === 'GIFT' && entry && v && v.id === row.voucherId && (v.giftBalance ?? 0) - this.take(entry).balance + giftBack(row) > MAX_AMOUNT) {
      outcome = new ProblemError('conflict', `giving back ${giftBack(row)} credits would put the gift balance above ${MAX_AMOUNT} (2^53-1)`);
    } else {
      this.rolledBackHere.add(row.id);
      const rollbackId = uuidv7();
      // A deleted voucher has no counters left to restore; the redemption is still marked rolled back.
      if (entry && v && v.id === row.voucherId) {
        const t = this.take(entry);
        t.uses -= 1;
        if (row.kind === 'GIFT') t.balance -= giftBack(row);
        if (row.kind === 'POINTS') t.balance -= row.points ?? 0;
        planDelta(this.plan, v, -1, row.kind === 'GIFT' ? giftBack(row) : 0);
        if (row.campaignId === v.campaignId) planBudget(this.plan, this.ctx.calendar, v, row.createdAt.getTime(), -1, row.amount);
        if (row.kind === 'GIFT' && giftBack(row) > 0) {
          planLedger(this.plan, v, { type: call.reason === RETURN_REASON ? 'RETURN' : 'ROLLBACK', amount: giftBack(row), redemptionId: row.id }, this.createdAt);
        }
        if (row.customerId) planUsage(this.plan, v, row.customerId, -1);
      }
      const rollback = { workspaceId: call.workspaceId, id: rollbackId, reason: call.reason ?? null, createdAt: this.createdAt };
      planRollback(this.plan, this.ctx.calendar, row, rollback, call.audit, v?.timeZone ?? 'UTC', call.conversionReason);
      const createdAt = this.createdAt.toISOString();
      outcome = { ok: true, rollback: { id: rollbackId, redemptionId: row.id, voucherCode: row.voucherCode, amount: row.amount, createdAt } };
    }
    if (call.idempotency && !(outcome instanceof Error)) {
      this.plan.keys.push({ workspaceId: call.workspaceId, key: call.idempotency.key, requestHash: call.idempotency.hash, response: outcome });
    }
    return outcome;
  }

  /** A top-up (CREDITS_ADDED) or a signed correction (ADJUSTMENT) of a gift card, within 0 and 2^53-1. */
  private adjust(call: Call<'adjust'>): unknown {
    const entry = this.ctx.entryOf(call.workspaceId, call.code);
    const v = entry?.snapshot ?? undefined;
    if (!entry || !v) return new ProblemError('not_found', 'no such voucher');
    if (v.type !== 'GIFT_CARD') return new ProblemError('invalid_request', 'only gift cards have a balance');
    if (call.entryType === 'CREDITS_ADDED' && call.amount < 0) {
      return new ProblemError('invalid_request', 'CREDITS_ADDED takes a positive amount; use ADJUSTMENT to take credits away');
    }
    const t = this.take(entry);
    const balance = (v.giftBalance ?? 0) - t.balance;
    if (call.amount > 0 && balance + call.amount > MAX_AMOUNT) {
      return invalidField('body.amount', `the balance would pass ${MAX_AMOUNT} (2^53-1): it is ${balance}, so at most ${MAX_AMOUNT - balance} can be added`);
    }
    // Credits held by stacks or reserved by validation sessions cannot be taken away.
    const reserved = this.sessions.reserved(entry, this.ctx.now).balance;
    const available = balance - entry.heldBalance - entry.pendingBalance - reserved;
    if (available + call.amount < 0) {
      return new ProblemError('conflict', `the balance would fall below 0 (it is ${available}${reserved ? `, after ${reserved} reserved by validation sessions` : ''})`);
    }
    t.balance -= call.amount;
    planDelta(this.plan, v, 0, call.amount);
    const row = planLedger(this.plan, v, { type: call.entryType, amount: call.amount, redemptionId: null }, this.createdAt);
    this.plan.audited.push({ kind: 'adjustment', trail: call.audit, code: v.code, entry: row });
    const createdAt = this.createdAt.toISOString();
    return () => ({
      code: v.code,
      balance: row.balanceAfter,
      entry: { id: row.id, type: row.type, amount: row.amount, balanceAfter: row.balanceAfter, createdAt },
    });
  }
}
