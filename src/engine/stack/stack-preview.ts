// What a stack would give, committing and reserving nothing: its preview, and the best deal among offers. Both read
// the entries exactly as the stack's redemption across partitions does (stack-entries.ts: the same snapshots, with
// other stacks' holds and other sessions' reservations counted) and decide with the same pure functions in the same
// order (evaluateStack; bestDeal decides its winner with evaluateStack too), so a stack redeemed right after on the
// same state gives what they said.
import { bestDeal } from '../../checkout/best-deal.rules.js';
import { orderTotals, refusalFields } from '../../checkout/redemption.rules.js';
import { evaluateStack, type StackEntry, type StackEvaluation } from '../../checkout/stack.rules.js';
import type { Order } from '../../contract/checkout.schemas.js';
import type { StackQuestion } from '../../contract/engine-port.js';
import type { BestDeal, BestDealVoucher, StackPreview } from '../../contract/stack-preview.schemas.js';
import type { PartitionRouter } from '../partition-router.js';
import { rereadBudgets, resolveVouchers, stackEntries, type StackVoucher } from './stack-entries.js';
import type { ZoneCalendar } from '../../contract/zone-calendar.js';

/** A stack's answer without what only a commit gives (its stackId, the redemptions' ids). */
export function previewOf(evaluation: StackEvaluation, order: Order): StackPreview {
  if (!evaluation.ok) return { ok: false, ...refusalFields(evaluation.failure!), results: evaluation.results };
  return { ok: true, results: evaluation.results, order: orderTotals(order, evaluation.state) };
}

export async function previewStack(router: PartitionRouter, calendar: ZoneCalendar, question: StackQuestion, now: () => number = Date.now): Promise<StackPreview> {
  const vouchers = resolveVouchers(question.vouchers);
  const entries = await freshEntries(router, question, vouchers);
  return previewOf(evaluateStack(entries, question.order, question.stackLimit, now(), calendar), question.order);
}

/**
 * The entries on the partitions' state, with every campaign budget among them read again first. A partition's budget
 * figures may lag uses made through another partition in either direction; a redemption finds out from its commit's
 * guard (or, on a refusal, by reading them again) and decides again on fresh figures, so a preview that must equal it
 * decides on fresh figures from the start. One read per budgeted campaign; entries without a budget are read once.
 */
async function freshEntries(router: PartitionRouter, question: StackQuestion, vouchers: ReturnType<typeof resolveVouchers>): Promise<StackEntry[]> {
  const entries = await stackEntries(router, question.workspaceId, vouchers, question.customer);
  if (!entries.some((e) => e.voucher?.campaign?.budget)) return entries;
  await rereadBudgets(router, question.workspaceId, vouchers, entries);
  return stackEntries(router, question.workspaceId, vouchers, question.customer);
}

/** Of the offers given (codes and tiers), the allowed stack with the largest discount (checkout/best-deal.rules.ts). */
export async function bestStack(router: PartitionRouter, calendar: ZoneCalendar, question: StackQuestion, now: () => number = Date.now): Promise<BestDeal> {
  const entries = await freshEntries(router, question, resolveVouchers(question.vouchers));
  const found = bestDeal(entries, question.order, question.stackLimit, now(), calendar);
  const named = (v: StackVoucher): BestDealVoucher => (v.tierId !== undefined ? { tierId: v.tierId } : { code: v.code! });
  return { vouchers: found.members.map((i) => named(question.vouchers[i]!)), order: orderTotals(question.order, found.evaluation.state), exact: found.exact };
}
