// The decision path of the hot operations, as pure functions: may this voucher be used (the contract's explanation
// codes, checked in one fixed order), how much does it give, and the stack rules (priority, exclusivity, caps).
import type { CustomerUse } from '../contract/engine-port.js';
import { explanationMessage } from '../contract/outcomes.js';
import { evaluateConditions, itemMatches, type CustomerFacts } from './condition.rules.js';
import { conditionLeaves, type ConditionTree } from '../contract/condition.schemas.js';
import { withinSchedule } from './schedule.rules.js';
import { lineWith, planDiscount, spreadPlan, type LineState } from './discount.rules.js';
import { MAX_AMOUNT, type Explanation, type ExplanationCode, type Order, type OrderTotals, type ValidationOutcome } from '../contract/checkout.schemas.js';
import type { VoucherSnapshot } from '../contract/voucher-snapshot.schemas.js';
import type { ZoneCalendar } from '../contract/zone-calendar.js';
export type { CampaignSnapshot, VoucherSnapshot } from '../contract/voucher-snapshot.schemas.js';

/** The caller's side of a decision: who asks, and what is held or used already. */
export interface UseContext {
  /** Resolved customer id; null when no customer was given or it is new (no uses yet). */
  customerId: string | null;
  customerGiven: boolean;
  /** This customer's successful uses of this voucher (held ones included). */
  customerUses: number;
  /** Uses and gift credits held by stacks in flight. */
  heldUses: number;
  heldBalance: number;
  /** Uses and gift credits reserved by the live validation sessions of other checkouts (absent: none). */
  reserved?: Reserved | undefined;
  /** The customer's segments and metadata, for validation rules (absent: nothing known). */
  facts?: CustomerUse['facts'];
  /** What is left of the campaign's budget as the deciding partition sees it (absent or null: no limit). */
  budget?: BudgetLeft | undefined;
  /** For a referral code: the referee's past, read for this decision (absent: nothing known, e.g. a new customer). */
  referee?: RefereeFacts | undefined;
}

export interface RefereeFacts {
  /** The customer has a PAID or FULFILLED order. */
  hasPaidOrder: boolean;
  /** The customer has a conversion (not reverted) in the code's program. */
  referred: boolean;
}

export interface Reserved {
  uses: number;
  balance: number;
}

/**
 * The balance a voucher is paid from, in its own unit: a gift card's credits, a loyalty card's points (0 otherwise).
 * Holds, reservations and a batch's takes of a voucher count in the same unit.
 */
export function storedBalance(v: VoucherSnapshot): number {
  return v.type === 'LOYALTY_CARD' ? (v.points?.balance ?? 0) : (v.giftBalance ?? 0);
}

/** What this caller may take of the balance (credits or points): less what stacks hold and other sessions reserve. */
export function availableBalance(v: VoucherSnapshot, use: UseContext): number {
  return storedBalance(v) - use.heldBalance - (use.reserved?.balance ?? 0);
}

export interface PointValue {
  points: number;
  amount: number;
}

/**
 * Money `points` are worth: floor(points × amount / value.points), exact, at most 2^53-1. In doubles while the product
 * stays below 2^53 (one division of such an integer floors exactly), else in BigInt.
 */
export function pointsWorth(points: number, value: PointValue): number {
  if (points <= 0) return 0;
  const product = points * value.amount;
  if (product <= Number.MAX_SAFE_INTEGER) return Math.floor(product / value.points);
  const worth = (BigInt(points) * BigInt(value.amount)) / BigInt(value.points);
  return worth > BigInt(MAX_AMOUNT) ? MAX_AMOUNT : Number(worth);
}

/** Points that pay `amount`: ceil(amount × value.points / value.amount). Never more than the points worth it. */
export function pointsFor(amount: number, value: PointValue): number {
  if (amount <= 0) return 0;
  const numerator = amount * value.points + value.amount - 1;
  if (numerator <= Number.MAX_SAFE_INTEGER) return Math.floor(numerator / value.amount);
  const per = BigInt(value.amount);
  return Number((BigInt(amount) * BigInt(value.points) + per - 1n) / per);
}

/** What a grant takes from the voucher's own balance: gift credits, points, or nothing (a discount). */
export function balanceTaken(g: Grant): number {
  return g.kind === 'GIFT' ? g.amount : g.kind === 'POINTS' ? g.points : 0;
}

/** Redemptions and amount left in the tightest period of a campaign budget; null when that dimension is unlimited. */
export interface BudgetLeft {
  uses: number | null;
  amount: number | null;
}

export interface Refusal {
  ok: false;
  code: ExplanationCode;
  message: string;
  details?: Record<string, unknown>;
}

/** What a voucher gives: a discount, gift credits, or money paid with points (`points` taken for `amount`). */
export type Grant =
  /** `itemDiscounts`: a discount's share of each order item, when it was applied to an order with items. */
  | { ok: true; kind: 'DISCOUNT' | 'GIFT'; amount: number; discountType: string; itemDiscounts?: number[] }
  | { ok: true; kind: 'POINTS'; amount: number; points: number; discountType: 'LOYALTY_POINTS' };

export type Decision = Refusal | Grant;

export function refusal(code: ExplanationCode, details?: Record<string, unknown>): Refusal {
  return { ok: false, code, message: explanationMessage(code), ...(details ? { details } : {}) };
}

export function explanationOf(r: Refusal): Explanation {
  return { code: r.code, message: r.message, ...r.details };
}

/** The fields every outcome carries for a refusal: its code, message and explanation. */
export function refusalFields(r: Refusal): { code: ExplanationCode; message: string; explanations: Explanation[] } {
  return { code: r.code, message: r.message, explanations: [explanationOf(r)] };
}

export const messageOf = (code: ExplanationCode): string => explanationMessage(code);

export const effectivePriority = (v: VoucherSnapshot): number => v.priority ?? v.campaign?.priority ?? 0;
export const isExclusive = (v: VoucherSnapshot): boolean => v.exclusive ?? v.campaign?.exclusive ?? false;
export const voucherCurrency = (v: VoucherSnapshot): string | null => v.currency ?? v.campaign?.currency ?? null;

/** Whether a condition tree reads a field that starts with `prefix` (`customer.`, `customer.redemptions`). */
function reads(tree: ConditionTree, prefix: string): boolean {
  return conditionLeaves(tree).some(({ leaf }) => leaf.field.startsWith(prefix));
}

/**
 * Whether a decision on this voucher reads the customer's past uses of it: a per-customer limit, or a rule on
 * customer.redemptions. Otherwise a partition need not load them (a new customer costs no query).
 */
export function readsCustomerUses(v: VoucherSnapshot): boolean {
  return v.perCustomerLimit !== null || v.referral !== null || v.rules.some((r) => reads(r.conditions, 'customer.redemptions'));
}

/** A known customer as the engine takes it: its id, and the facts its rules read. */
export function customerUseOf(c: CustomerFacts): CustomerUse {
  return { id: c.id, given: true, facts: { segments: [...c.segments], metadata: c.metadata, sourceId: c.sourceId ?? null, email: c.email ?? null, name: c.name ?? null } };
}

/** The referee is the referrer: the same customer, or one sharing its email (any case) or sourceId. */
function isSelfReferral(r: NonNullable<VoucherSnapshot['referral']>, use: UseContext): boolean {
  if (use.customerId !== null && use.customerId === r.referrerId) return true;
  const email = use.facts?.email;
  if (email && r.referrerEmail && email.toLowerCase() === r.referrerEmail.toLowerCase()) return true;
  const sourceId = use.facts?.sourceId;
  return !!sourceId && sourceId === r.referrerSourceId;
}

/**
 * A referral code's own refusals, in the contract's order: a referee is needed, who is not the referrer, is new (when
 * the program asks), has not been referred in the program (counting this customer's other uses of the code as held or
 * decided in this batch), and the referrer's cap (the code's redemption limit) is not reached.
 */
function referralRefusal(v: VoucherSnapshot, use: UseContext): Refusal | undefined {
  const r = v.referral!;
  if (!use.customerGiven) return refusal('customer_required');
  if (isSelfReferral(r, use)) return refusal('referral_self_use');
  if (r.refereeMustBeNew && use.referee?.hasPaidOrder) return refusal('referee_not_new');
  if (use.referee?.referred || use.customerUses > 0) return refusal('referee_already_referred', { programId: r.programId });
  const reserved = use.reserved?.uses ?? 0;
  if (v.redemptionLimit !== null && v.redeemedCount + use.heldUses + reserved >= v.redemptionLimit) {
    return refusal('referrer_limit_reached', { limit: v.redemptionLimit });
  }
  return undefined;
}

/**
 * The voucher's (and its campaign's) validation rules against the order, the customer and the local time. A rule
 * that reads customer fields needs a customer (`customer_required`); a rule that does not hold is
 * `validation_rule_failed`, naming the rule, the failing condition and the rule's own message for the customer.
 */
export function ruleRefusal(v: VoucherSnapshot, order: Order | undefined, use: UseContext, now: number, calendar: ZoneCalendar): Refusal | undefined {
  if (v.rules.length === 0) return undefined;
  const time = calendar.timeFacts(now, v.timeZone);
  const customer: CustomerFacts | undefined = use.customerGiven
    ? { segments: [], metadata: {}, ...use.facts, id: use.customerId, redemptions: use.customerUses }
    : undefined;
  for (const rule of v.rules) {
    if (!customer && reads(rule.conditions, 'customer.')) return refusal('customer_required', { ruleId: rule.id, ruleName: rule.name });
    const result = evaluateConditions(rule.conditions, { order, customer, time }, rule.applicableTo);
    if (!result.ok) {
      return {
        ok: false,
        code: 'validation_rule_failed',
        message: rule.errorMessage ?? explanationMessage('validation_rule_failed'),
        details: {
          ruleId: rule.id,
          ruleName: rule.name,
          condition: { path: result.path, ...result.leaf },
          ...(rule.errorMessage !== null ? { errorMessage: rule.errorMessage } : {}),
        },
      };
    }
  }
  return undefined;
}

/** Order lines a voucher may discount: those its rules' `applicableTo` select (any of them), else every line. */
export function targetLines(v: VoucherSnapshot, lines: readonly LineState[]): number[] | undefined {
  // Most vouchers have no rule that scopes them (asked for every voucher a best-deal search tries): nothing to build.
  if (!v.rules.some((r) => r.applicableTo)) return undefined;
  const scopes = v.rules.flatMap((r) => (r.applicableTo ? [r.applicableTo] : []));
  if (scopes.length === 0) return undefined;
  return lines.flatMap((line, i) => (scopes.some((scope) => itemMatches(line, scope)) ? [i] : []));
}

/** A campaign budget after a grant: refused when the grant would take more redemptions or amount than is left. */
export function budgetRefusal(v: VoucherSnapshot, budget: BudgetLeft | undefined, amount: number, spent = { uses: 0, amount: 0 }): Refusal | undefined {
  if (!budget || !v.campaign?.budget) return undefined;
  if (budget.uses !== null && budget.uses - spent.uses < 1) return refusal('campaign_budget_exhausted', { campaignId: v.campaign.id });
  if (budget.amount !== null && amount > budget.amount - spent.amount) {
    return refusal('campaign_budget_exhausted', { campaignId: v.campaign.id, amountLeft: Math.max(0, budget.amount - spent.amount) });
  }
  return undefined;
}

export interface UseRequest {
  order?: Order | undefined;
  /** Gift credits wanted. */
  amount?: number | undefined;
}

/** The contract's explanation codes, in the one order they are checked. */
export function eligibility(v: VoucherSnapshot, use: UseContext, request: UseRequest, now: number, calendar: ZoneCalendar): Refusal | undefined {
  const c = v.campaign;
  if (c && (!c.active || (c.startDate !== null && now < c.startDate) || (c.expirationDate !== null && now > c.expirationDate))) {
    return refusal('campaign_inactive', { campaignId: c.id });
  }
  if (!v.active) return refusal(v.type === 'LOYALTY_CARD' ? 'loyalty_member_inactive' : 'voucher_disabled');
  if (v.startDate !== null && now < v.startDate) return refusal('voucher_not_started', { startDate: new Date(v.startDate).toISOString() });
  if (v.expirationDate !== null && now > v.expirationDate) return refusal('voucher_expired', { expirationDate: new Date(v.expirationDate).toISOString() });
  if ((c?.schedule && !withinSchedule(c.schedule, now, v.timeZone, calendar)) || (v.schedule && !withinSchedule(v.schedule, now, v.timeZone, calendar))) {
    return refusal('outside_schedule');
  }
  const card = v.type === 'LOYALTY_CARD';
  if (card && !v.points?.value) return refusal('loyalty_pay_with_points_disabled');
  const gift = v.type === 'GIFT_CARD';
  if (!request.order && (v.type === 'DISCOUNT' || request.amount === undefined)) return refusal('order_required');
  const currency = voucherCurrency(v);
  if (request.order && currency !== null && request.order.currency !== currency) {
    return refusal('currency_mismatch', { orderCurrency: request.order.currency, voucherCurrency: currency });
  }
  // A loyalty card's code is its member's: it pays without naming the customer, but never for another one.
  if (v.referral) {
    const refused = referralRefusal(v, use);
    if (refused) return refused;
  }
  if ((v.perCustomerLimit !== null || (v.customerId !== null && !card)) && !use.customerGiven) return refusal('customer_required');
  if (v.customerId !== null && use.customerGiven && use.customerId !== v.customerId) return refusal('voucher_assigned_to_other_customer');
  const reserved = use.reserved?.uses ?? 0;
  if (v.redemptionLimit !== null && v.redeemedCount + use.heldUses + reserved >= v.redemptionLimit) {
    return refusal('redemption_limit_reached', { limit: v.redemptionLimit, ...(reserved ? { reserved } : {}) });
  }
  if (v.perCustomerLimit !== null && use.customerUses >= v.perCustomerLimit) {
    return refusal('per_user_redemption_limit_reached', { limit: v.perCustomerLimit });
  }
  if (card) {
    // Points held by stacks or reserved by other sessions are there, but not for this caller.
    const points = availableBalance(v, use);
    const worth = pointsWorth(points, v.points!.value!);
    if (worth <= 0 || (request.amount !== undefined && request.amount > worth)) {
      return refusal('loyalty_points_insufficient', {
        points: Math.max(0, points),
        balance: worth,
        ...(request.amount !== undefined ? { amount: request.amount } : {}),
      });
    }
  }
  if (gift) {
    if ((v.giftBalance ?? 0) - use.heldBalance <= 0) return refusal('gift_balance_zero');
    // Credits reserved by other sessions are there, but not for this caller.
    const balance = availableBalance(v, use);
    const reservedBalance = use.reserved?.balance ?? 0;
    if (balance <= 0 || (request.amount !== undefined && request.amount > balance)) {
      return refusal('gift_balance_insufficient', {
        balance: Math.max(0, balance),
        ...(request.amount !== undefined ? { amount: request.amount } : {}),
        ...(reservedBalance ? { reserved: reservedBalance } : {}),
      });
    }
  }
  return ruleRefusal(v, request.order, use, now, calendar);
}

/** Running state of one order while vouchers are applied to it in turn. */
export interface OrderState {
  remaining: number;
  /** Left of the order's shipping; only FREE_SHIPPING takes it. */
  shippingLeft: number;
  /** What discounts took off the shipping. */
  shippingDiscount: number;
  lines: LineState[];
  discountShares: number[];
  discountAmount: number;
  giftAmount: number;
}

export function startOrder(order: Order | undefined): OrderState {
  const lines = (order?.items ?? []).map((item) => lineWith(item, item.price * item.quantity));
  const shipping = order?.shipping?.amount ?? 0;
  return { remaining: order?.amount ?? 0, shippingLeft: shipping, shippingDiscount: 0, lines, discountShares: lines.map(() => 0), discountAmount: 0, giftAmount: 0 };
}

/** What an eligible voucher gives against what is left of the order; `state` moves on when `apply` is true. */
export function grant(v: VoucherSnapshot, use: UseContext, request: UseRequest, state: OrderState, apply: boolean): Grant {
  if (v.type === 'GIFT_CARD' || v.type === 'LOYALTY_CARD') {
    // A card pays like a gift card whose money is what its points are worth; the points taken are what pays that.
    const value = v.type === 'LOYALTY_CARD' ? v.points!.value! : undefined;
    const balance = value ? pointsWorth(availableBalance(v, use), value) : availableBalance(v, use);
    const wanted = request.amount ?? Math.min(balance, state.remaining);
    const amount = request.order ? Math.min(wanted, state.remaining) : wanted;
    if (apply) {
      state.remaining -= amount;
      state.giftAmount += amount;
    }
    if (value) return { ok: true, kind: 'POINTS', amount, points: pointsFor(amount, value), discountType: 'LOYALTY_POINTS' };
    return { ok: true, kind: 'GIFT', amount, discountType: 'GIFT_CARD' };
  }
  const discount = v.discount!;
  const targets = targetLines(v, state.lines);
  const plan = planDiscount(discount, state, v.maxDiscount, targets);
  if (apply) {
    // Lines of its own for the state (spreadPlan replaces the ones it changes, never changing a line in place).
    const lines = state.lines.slice();
    const shares = spreadPlan(plan, lines);
    state.lines = lines;
    for (let i = 0; i < shares.length; i++) state.discountShares[i]! += shares[i]!;
    state.shippingLeft -= plan.shipping;
    state.shippingDiscount += plan.shipping;
    state.remaining -= plan.amount;
    state.discountAmount += plan.amount;
    if (shares.length > 0) return { ok: true, kind: 'DISCOUNT', amount: plan.amount, discountType: discount.type, itemDiscounts: shares };
  }
  return { ok: true, kind: 'DISCOUNT', amount: plan.amount, discountType: discount.type };
}

export function orderTotals(order: Order, state: OrderState): OrderTotals {
  return {
    amount: order.amount,
    discountAmount: state.discountAmount,
    giftAmount: state.giftAmount,
    totalAmount: Math.max(0, order.amount - state.discountAmount - state.giftAmount),
    currency: order.currency,
    ...(order.items?.length
      ? {
          items: order.items.map((item, index) => ({
            index,
            ...(item.productId !== undefined ? { productId: item.productId } : {}),
            ...(item.sku !== undefined ? { sku: item.sku } : {}),
            amount: item.price * item.quantity,
            discountAmount: state.discountShares[index]!,
          })),
        }
      : {}),
    ...(order.shipping ? { shipping: { amount: order.shipping.amount, discountAmount: state.shippingDiscount } } : {}),
  };
}

/** One voucher alone: eligibility, then its grant against the whole order. */
export function decideSingle(v: VoucherSnapshot | undefined, use: UseContext, request: UseRequest, now: number, calendar: ZoneCalendar): { decision: Decision; state: OrderState } {
  const state = startOrder(request.order);
  if (!v) return { decision: refusal('voucher_not_found'), state };
  const refused = eligibility(v, use, request, now, calendar);
  if (refused) return { decision: refused, state };
  const given = grant(v, use, request, state, true);
  return { decision: budgetRefusal(v, use.budget, given.amount) ?? given, state };
}

/** The answer to a validation: the decision of one voucher alone, with the order totals and what the voucher is. */
export function validationOutcome(v: VoucherSnapshot | undefined, use: UseContext, request: UseRequest, now: number, calendar: ZoneCalendar): ValidationOutcome {
  const { decision, state } = decideSingle(v, use, request, now, calendar);
  if (!decision.ok) return { valid: false, ...refusalFields(decision) };
  return {
    valid: true,
    discount: { type: decision.discountType, amount: decision.amount, ...(decision.kind === 'POINTS' ? { points: decision.points } : {}) },
    ...(request.order ? { order: orderTotals(request.order, state) } : {}),
    voucher: {
      code: v!.code,
      type: v!.type,
      ...(v!.campaignId ? { campaignId: v!.campaignId } : {}),
      ...(v!.type === 'GIFT_CARD' ? { balance: Math.max(0, availableBalance(v!, use)) } : {}),
      ...(v!.type === 'LOYALTY_CARD' ? { balance: pointsWorth(availableBalance(v!, use), v!.points!.value!), points: Math.max(0, availableBalance(v!, use)) } : {}),
    },
  };
}
