// What a batch of decisions writes, as one plan: the idempotency keys, the counter changes, the rows (redemptions,
// rollbacks, ledger entries, referral conversions, points moves), the outbox events and the insight sums. The write
// planner and the stack coordinator build plans with these functions; group-commit.ts writes them.
import type { AuditTrail } from '../../contract/handler.js';
import { uuidv7 } from '../../platform/ids.js';
import { budgetLimits } from '../../domains/campaigns/campaign-budget.rules.js';
import type { ZoneCalendar } from '../../contract/zone-calendar.js';
import type { NewEvent } from '../../domains/events/index.js';
import { readsCustomerUses, type VoucherSnapshot } from '../../checkout/redemption.rules.js';
import { MAX_AMOUNT, type Order } from '../../contract/checkout.schemas.js';
import type { AuditedWrite } from './audited-writes.js';
import type { BudgetDelta, LedgerRow, RedemptionRow, RollbackRow, RollupDelta, SessionWrite, UsageDelta, VoucherDelta } from './batch-writes.js';
import type { StoredKey } from '../../platform/idempotency-keys.sql.js';
import type { StoredRedemption } from './hot-path.sql.js';
import type { PointsDebit, PointsRefund } from './points-moves.sql.js';
import type { ConversionRow } from './referral-conversions.sql.js';

export interface WritePlan {
  keys: StoredKey[];
  rollbackIds: string[];
  deltas: Map<string, VoucherDelta>;
  usage: Map<string, UsageDelta>;
  /** perCustomerLimit by voucher id, for the vouchers whose usage changes. */
  usageLimits: Map<string, number | null>;
  redemptions: RedemptionRow[];
  rollbacks: RollbackRow[];
  /** Ledger rows per voucher id, in the order of their changes; balanceAfter is settled at commit. */
  ledger: Map<string, LedgerRow[]>;
  events: NewEvent[];
  /** Net budget change by `campaign period`. */
  budgets: Map<string, BudgetDelta>;
  /** Rollbacks, adjustments and session releases, each with its operation's trail: their entries commit with the batch. */
  audited: AuditedWrite[];
  /** Validation sessions by `voucherId key`: the last state the batch decided for each. */
  sessions: Map<string, SessionWrite>;
  /** Insight figures by `workspace campaign currency hour`: the batch's sums, one row each. */
  rollups: Map<string, RollupDelta>;
  /** Loyalty cards paying with points (in the batch statement), and rollbacks giving points back (after it). */
  pointsDebits: PointsDebit[];
  pointsRefunds: PointsRefund[];
  /** Referral conversions made by the batch's redemptions, and those its rollbacks revert. */
  conversions: ConversionRow[];
  revertedConversions: string[];
  /**
   * The partition leases the batch was decided under, as `slot:token`: the statement checks each against
   * partition_leases (and holds it until commit), so a process that lost a lease can no longer write its vouchers.
   */
  fences: Set<string>;
}

export function emptyPlan(): WritePlan {
  return {
    keys: [],
    rollbackIds: [],
    deltas: new Map(),
    usage: new Map(),
    usageLimits: new Map(),
    redemptions: [],
    rollbacks: [],
    ledger: new Map(),
    events: [],
    budgets: new Map(),
    audited: [],
    sessions: new Map(),
    rollups: new Map(),
    pointsDebits: [],
    pointsRefunds: [],
    conversions: [],
    revertedConversions: [],
    fences: new Set(),
  };
}

export const usageKey = (voucherId: string, customerId: string) => `${voucherId} ${customerId}`;

export function isEmpty(plan: WritePlan): boolean {
  return plan.keys.length === 0 && plan.pointsDebits.length === 0 && plan.deltas.size === 0 && plan.rollbackIds.length === 0 && plan.events.length === 0 && plan.audited.length === 0 && plan.sessions.size === 0;
}

/** The `voucher.stack.redeemed` event of a stack: each member's redemption (by code or tier) and amount. */
export function planStackEvent(plan: WritePlan, workspaceId: string, stackId: string, results: ReadonlyArray<{ redemptionId?: string; tierId?: string; voucherCode?: string; amount?: number }>): void {
  plan.events.push({
    workspaceId,
    type: 'voucher.stack.redeemed',
    payload: { stackId, redemptions: results.map((r) => ({ redemptionId: r.redemptionId, ...(r.tierId !== undefined ? { tierId: r.tierId } : { voucherCode: r.voucherCode }), amount: r.amount })) },
  });
}

export interface RedemptionDraft {
  voucher: VoucherSnapshot;
  kind: 'DISCOUNT' | 'GIFT' | 'POINTS';
  amount: number;
  /** Points a loyalty card pays `amount` with (kind POINTS). */
  points?: number | undefined;
  /** A discount's share of each order item (what a return of those units gives back). */
  itemDiscounts?: number[] | undefined;
  customerId: string | null;
  order: Order | undefined;
  metadata: Record<string, unknown> | undefined;
  stackId: string | null;
  createdAt: Date;
}

/** Adds one redemption to a plan: its counters, per-customer use, ledger entry, row and voucher.redeemed event. */
export function planRedemption(plan: WritePlan, calendar: ZoneCalendar, draft: RedemptionDraft): string {
  const { voucher: v, kind, amount, customerId, order, createdAt } = draft;
  const id = uuidv7();
  const points = kind === 'POINTS' ? (draft.points ?? 0) : 0;
  planDelta(plan, v, 1, kind === 'GIFT' ? -amount : 0, points);
  if (customerId) planUsage(plan, v, customerId, 1);
  if (kind === 'GIFT') planLedger(plan, v, { type: 'REDEMPTION', amount: -amount, redemptionId: id }, createdAt);
  // The debit's ledger entry gets its id here, so the redemption row is inserted with it (no update after the debit).
  const pointsEntryId = points > 0 ? uuidv7() : null;
  if (pointsEntryId) {
    plan.pointsDebits.push({ workspaceId: v.workspaceId, memberId: v.id, redemptionId: id, entryId: pointsEntryId, points, orderId: order?.id ?? null });
    plan.events.push({
      workspaceId: v.workspaceId,
      type: 'loyalty.points.spent',
      payload: { memberId: v.id, programId: v.campaignId, points, amount, redemptionId: id, ...(order?.id ? { orderId: order.id } : {}) },
    });
  }
  if (v.referral && customerId) planConversion(plan, v, v.referral, customerId, id, order?.id ?? null, createdAt);
  planBudget(plan, calendar, v, createdAt.getTime(), 1, amount);
  const rollup = planRollup(plan, calendar, { workspaceId: v.workspaceId, campaignId: v.campaignId, currency: order?.currency ?? v.currency }, createdAt, v.timeZone);
  rollup.redemptions += 1;
  // Money paid with points counts as credits, like a gift card's: it is not a discount.
  if (kind !== 'DISCOUNT') rollup.giftAmount = Math.min(rollup.giftAmount + amount, MAX_AMOUNT);
  else rollup.discountAmount = Math.min(rollup.discountAmount + amount, MAX_AMOUNT);
  plan.redemptions.push({
    workspaceId: v.workspaceId,
    id,
    voucherId: v.id,
    voucherCode: v.code,
    campaignId: v.campaignId,
    amount,
    kind,
    customerId,
    orderId: order?.id ?? null,
    orderAmount: order?.amount ?? null,
    currency: order?.currency ?? v.currency,
    stackId: draft.stackId,
    itemDiscounts: draft.itemDiscounts ?? null,
    metadata: draft.metadata ?? {},
    createdAt,
    points: pointsEntryId ? points : null,
    pointsEntryId,
  });
  plan.events.push({
    workspaceId: v.workspaceId,
    type: v.kind === 'TIER' ? 'promotion_tier.redeemed' : 'voucher.redeemed',
    payload: {
      redemptionId: id,
      ...(v.kind === 'TIER' ? { tierId: v.id, campaignId: v.campaignId } : { voucherCode: v.code }),
      amount,
      ...(points > 0 ? { points } : {}),
      ...(customerId ? { customerId } : {}),
      ...(order?.id ? { orderId: order.id } : {}),
      ...(draft.stackId ? { stackId: draft.stackId } : {}),
    },
  });
  return id;
}

/**
 * A referee's conversion of a referral code, recorded with the redemption: confirmed at once when the program confirms
 * on redemption, else pending until its order is paid. Its events go out with the batch.
 */
function planConversion(
  plan: WritePlan,
  v: VoucherSnapshot,
  referral: NonNullable<VoucherSnapshot['referral']>,
  refereeId: string,
  redemptionId: string,
  orderId: string | null,
  createdAt: Date,
): void {
  const status = referral.confirmOn === 'REDEMPTION' ? 'CONFIRMED' : 'PENDING';
  const conversion: ConversionRow = {
    workspaceId: v.workspaceId,
    id: uuidv7(),
    programId: referral.programId,
    voucherId: v.id,
    code: v.code,
    referrerId: referral.referrerId,
    refereeId,
    orderId,
    redemptionId,
    status,
    createdAt,
  };
  plan.conversions.push(conversion);
  const payload = {
    conversionId: conversion.id,
    programId: referral.programId,
    code: v.code,
    referrerCustomerId: referral.referrerId,
    refereeCustomerId: refereeId,
    redemptionId,
    ...(orderId ? { orderId } : {}),
    status,
  };
  plan.events.push({ workspaceId: v.workspaceId, type: 'referral.conversion.created', payload });
  if (status === 'CONFIRMED') plan.events.push({ workspaceId: v.workspaceId, type: 'referral.conversion.confirmed', payload });
}

/**
 * Adds a rollback's row, its voucher.redeemed.rolled_back event, its audit entry and its insight figures, counted in
 * the hour of the rollback (in `timeZone`) under the redemption's campaign and currency (the counters: planDelta etc.).
 */
export function planRollback(
  plan: WritePlan,
  calendar: ZoneCalendar,
  redemption: StoredRedemption,
  rollback: Omit<RollbackRow, 'redemptionId' | 'voucherCode' | 'amount' | 'returnedCredit'>,
  trail: AuditTrail,
  timeZone: string,
  conversionReason = 'ROLLBACK',
): void {
  const row: RollbackRow = { ...rollback, redemptionId: redemption.id, voucherCode: redemption.voucherCode, amount: redemption.amount, returnedCredit: redemption.returnedCredit };
  const rollup = planRollup(plan, calendar, redemption, rollback.createdAt, timeZone);
  rollup.rollbacks += 1;
  if (redemption.kind !== 'DISCOUNT') rollup.rolledBackGift = Math.min(rollup.rolledBackGift + redemption.amount, MAX_AMOUNT);
  else rollup.rolledBackDiscount = Math.min(rollup.rolledBackDiscount + redemption.amount, MAX_AMOUNT);
  plan.rollbackIds.push(redemption.id);
  plan.rollbacks.push(row);
  if (redemption.conversion) {
    plan.revertedConversions.push(redemption.conversion.id);
    plan.events.push({
      workspaceId: row.workspaceId,
      type: 'referral.conversion.reverted',
      payload: { conversionId: redemption.conversion.id, programId: redemption.conversion.programId, code: redemption.voucherCode, redemptionId: redemption.id, reason: conversionReason },
    });
  }
  if (redemption.kind === 'POINTS' && redemption.points) {
    plan.pointsRefunds.push({ workspaceId: row.workspaceId, redemptionId: redemption.id, rollbackId: row.id });
  }
  plan.events.push({
    workspaceId: row.workspaceId,
    type: 'voucher.redeemed.rolled_back',
    payload: { rollbackId: row.id, redemptionId: row.redemptionId, voucherCode: row.voucherCode, amount: row.amount, ...(redemption.points ? { points: redemption.points } : {}) },
  });
  plan.audited.push({ kind: 'rollback', trail, rollback: row });
}

/**
 * Adds a redemption (+1) or a rollback (-1) to the usage of its campaign's budget periods, with their limits: the
 * commit statement adds it under a guard, so the budget holds across partitions and processes. `at` is when the
 * redemption was made (a rollback gives back to the period the redemption was counted in).
 */
export function planBudget(plan: WritePlan, calendar: ZoneCalendar, v: VoucherSnapshot, at: number, uses: number, amount: number): void {
  const budget = v.campaign?.budget;
  if (!budget) return;
  for (const { period, limit } of budgetLimits(budget, calendar.budgetPeriods(at, v.timeZone))) {
    const key = `${v.campaign!.id} ${period}`;
    const delta = plan.budgets.get(key) ?? {
      workspaceId: v.workspaceId,
      campaignId: v.campaign!.id,
      period,
      uses: 0,
      amount: 0,
      maxUses: limit.redemptions ?? -1,
      maxAmount: limit.discountAmount ?? -1,
    };
    delta.uses += uses;
    delta.amount += uses > 0 ? amount : -amount;
    plan.budgets.set(key, delta);
  }
}

/** The batch's rollup sums for a (workspace, campaign, currency) in the hour of `at`: one row per batch, not per redemption. */
function planRollup(plan: WritePlan, calendar: ZoneCalendar, of: { workspaceId: string; campaignId: string | null; currency: string | null }, at: Date, timeZone: string): RollupDelta {
  const hour = calendar.rollupHour(at.getTime(), timeZone);
  const key = `${of.workspaceId} ${of.campaignId ?? ''} ${of.currency ?? ''} ${hour}`;
  let rollup = plan.rollups.get(key);
  if (!rollup) {
    rollup = { workspaceId: of.workspaceId, campaignId: of.campaignId, currency: of.currency ?? '', hour: new Date(hour), redemptions: 0, discountAmount: 0, giftAmount: 0, rollbacks: 0, rolledBackDiscount: 0, rolledBackGift: 0 };
    plan.rollups.set(key, rollup);
  }
  return rollup;
}

/** Sets the state a validation session of a voucher ends the batch in: a reservation until `expiresAt`, or none. */
export function planSession(plan: WritePlan, v: { id: string; workspaceId: string }, key: string, reservation: { amount: number; expiresAt: number } | null): void {
  plan.sessions.set(`${v.id} ${key}`, {
    workspaceId: v.workspaceId,
    voucherId: v.id,
    key,
    amount: reservation?.amount ?? 0,
    expiresAt: reservation ? new Date(reservation.expiresAt) : null,
  });
}

/** Adds uses and a balance change to a voucher's counter update, under the settings versions the decision saw. */
export function planDelta(plan: WritePlan, v: VoucherSnapshot, uses: number, balance: number, points = 0): void {
  const delta = plan.deltas.get(v.id) ?? { id: v.id, uses: 0, balance: 0, points: 0, configVersion: v.configVersion, campaignVersion: v.campaign?.version ?? null };
  delta.uses += uses;
  delta.balance += balance;
  delta.points += points;
  plan.deltas.set(v.id, delta);
}

/**
 * A change of a customer's uses of a voucher, for a voucher that reads them (readsCustomerUses; nothing for any other):
 * the partition's count and the guard of perCustomerLimit. Nothing is stored: the uses are the customer's redemptions
 * of the voucher not rolled back, so a voucher that starts reading them (a limit set later) counts those made before.
 */
export function planUsage(plan: WritePlan, v: VoucherSnapshot, customerId: string, delta: number): void {
  if (!readsCustomerUses(v)) return;
  const key = usageKey(v.id, customerId);
  const u = plan.usage.get(key) ?? { workspaceId: v.workspaceId, voucherId: v.id, customerId, delta: 0 };
  u.delta += delta;
  plan.usage.set(key, u);
  plan.usageLimits.set(v.id, v.perCustomerLimit);
}

export function planLedger(
  plan: WritePlan,
  v: { id: string; workspaceId: string },
  row: Pick<LedgerRow, 'type' | 'amount' | 'redemptionId'>,
  createdAt: Date,
): LedgerRow {
  const full: LedgerRow = { ...row, workspaceId: v.workspaceId, voucherId: v.id, id: uuidv7(), balanceAfter: 0, createdAt };
  plan.ledger.set(v.id, [...(plan.ledger.get(v.id) ?? []), full]);
  return full;
}

/** Several plans as one: counters and per-customer uses summed, rows and events concatenated in order. */
export function mergePlans(plans: readonly WritePlan[]): WritePlan {
  const merged = emptyPlan();
  for (const plan of plans) {
    merged.keys.push(...plan.keys);
    merged.rollbackIds.push(...plan.rollbackIds);
    merged.redemptions.push(...plan.redemptions);
    merged.rollbacks.push(...plan.rollbacks);
    merged.events.push(...plan.events);
    merged.audited.push(...plan.audited);
    merged.pointsDebits.push(...plan.pointsDebits);
    merged.pointsRefunds.push(...plan.pointsRefunds);
    merged.conversions.push(...plan.conversions);
    merged.revertedConversions.push(...plan.revertedConversions);
    for (const fence of plan.fences) merged.fences.add(fence);
    for (const [key, session] of plan.sessions) merged.sessions.set(key, session);
    for (const [id, d] of plan.deltas) {
      const into = merged.deltas.get(id);
      if (into) {
        into.uses += d.uses;
        into.balance += d.balance;
        into.points += d.points;
      } else merged.deltas.set(id, { ...d });
    }
    for (const [key, u] of plan.usage) {
      const into = merged.usage.get(key);
      if (into) into.delta += u.delta;
      else merged.usage.set(key, { ...u });
    }
    for (const [id, limit] of plan.usageLimits) merged.usageLimits.set(id, limit);
    for (const [id, rows] of plan.ledger) merged.ledger.set(id, [...(merged.ledger.get(id) ?? []), ...rows]);
    for (const [key, r] of plan.rollups) {
      const into = merged.rollups.get(key);
      if (into) {
        into.redemptions += r.redemptions;
        into.discountAmount = Math.min(into.discountAmount + r.discountAmount, MAX_AMOUNT);
        into.giftAmount = Math.min(into.giftAmount + r.giftAmount, MAX_AMOUNT);
        into.rollbacks += r.rollbacks;
        into.rolledBackDiscount = Math.min(into.rolledBackDiscount + r.rolledBackDiscount, MAX_AMOUNT);
        into.rolledBackGift = Math.min(into.rolledBackGift + r.rolledBackGift, MAX_AMOUNT);
      } else merged.rollups.set(key, { ...r });
    }
    for (const [key, b] of plan.budgets) {
      const into = merged.budgets.get(key);
      if (into) {
        into.uses += b.uses;
        into.amount += b.amount;
      } else merged.budgets.set(key, { ...b });
    }
  }
  return merged;
}
