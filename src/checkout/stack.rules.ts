// The stack rules, pure: the stack limit and duplicates first, then each voucher in priority order taking what the
// earlier ones left of the order and of its campaign's budget; an exclusive voucher never shares a stack.
import type { ExplanationCode, Order } from '../contract/checkout.schemas.js';
import type { VoucherSnapshot } from '../contract/voucher-snapshot.schemas.js';
import type { ZoneCalendar } from '../contract/zone-calendar.js';
import {
  budgetRefusal,
  effectivePriority,
  eligibility,
  grant,
  isExclusive,
  refusal,
  startOrder,
  type Grant,
  type OrderState,
  type Refusal,
  type UseContext,
} from './redemption.rules.js';

export interface StackEntry {
  /** A voucher code, or a tier's internal code `tier:<id>` when tierId is set. */
  code: string;
  tierId?: string | undefined;
  amount?: number | undefined;
  voucher: VoucherSnapshot | undefined;
  use: UseContext;
}

export interface StackMember {
  /** Index in the request's vouchers array. */
  index: number;
  voucher: VoucherSnapshot;
  grant: Grant;
}

export interface StackEvaluation {
  ok: boolean;
  failure?: Refusal;
  /** Per request entry, in request order. */
  results: Array<{ voucherCode?: string; tierId?: string; ok: boolean; code?: ExplanationCode; amount?: number; redemptionId?: string; priority: number }>;
  /** Members in evaluation order, when ok. */
  members: StackMember[];
  state: OrderState;
}

/**
 * The contract's stack rules: stack limit and duplicates first, then evaluation in priority order (higher first, ties
 * in request order); an exclusive voucher in a batch of more than one stops the evaluation; each voucher takes what it
 * gives from what the earlier ones left. The first failure fails the batch; the others are `skipped`.
 */
export function evaluateStack(
  entries: readonly StackEntry[],
  order: Order,
  stackLimit: number,
  now: number,
  calendar: ZoneCalendar,
): StackEvaluation {
  const state = startOrder(order);
  const priorities = entries.map((e) => (e.voucher ? effectivePriority(e.voucher) : 0));
  const named = (e: StackEntry) => (e.tierId !== undefined ? { tierId: e.tierId } : { voucherCode: e.code });
  const results: StackEvaluation['results'] = entries.map((e, i) => ({ ...named(e), ok: false, code: 'skipped', priority: priorities[i]! }));
  const fail = (index: number, r: Refusal): StackEvaluation => {
    const failed = entries.map((e, i) => ({ ...named(e), ok: false, code: i === index ? r.code : ('skipped' as const), priority: priorities[i]! }));
    return { ok: false, failure: r, results: failed, members: [], state: startOrder(order) };
  };
  const evaluationOrder = entries.map((_, i) => i).sort((a, b) => priorities[b]! - priorities[a]! || a - b);
  if (entries.length > stackLimit) {
    return fail(evaluationOrder[stackLimit]!, refusal('stack_limit_exceeded', { stackLimit }));
  }
  const seen = new Set<string>();
  for (let i = 0; i < entries.length; i++) {
    if (seen.has(entries[i]!.code)) return fail(i, refusal('duplicate_voucher', named(entries[i]!)));
    seen.add(entries[i]!.code);
  }
  const members: StackMember[] = [];
  // Members of one campaign share its budget: each takes from what the earlier ones left.
  const spent = new Map<string, { uses: number; amount: number }>();
  for (const index of evaluationOrder) {
    const entry = entries[index]!;
    const v = entry.voucher;
    if (!v) return fail(index, refusal(entry.tierId !== undefined ? 'promotion_tier_not_found' : 'voucher_not_found'));
    if (entries.length > 1 && isExclusive(v)) return fail(index, refusal('exclusive_conflict', named(entry)));
    const request = { order, amount: entry.amount };
    const refused = eligibility(v, entry.use, request, now, calendar);
    if (refused) return fail(index, refused);
    const given = grant(v, entry.use, request, state, true);
    const campaignSpent = v.campaign ? (spent.get(v.campaign.id) ?? { uses: 0, amount: 0 }) : undefined;
    const overBudget = budgetRefusal(v, entry.use.budget, given.amount, campaignSpent);
    if (overBudget) return fail(index, overBudget);
    if (v.campaign && campaignSpent) spent.set(v.campaign.id, { uses: campaignSpent.uses + 1, amount: campaignSpent.amount + given.amount });
    members.push({ index, voucher: v, grant: given });
    results[index] = { ...named(entry), ok: true, amount: given.amount, priority: priorities[index]! };
  }
  return { ok: true, results, members, state };
}
