// The best deal, pure: of the offers that qualify for a cart, the stack the stacking rules allow (stack limit,
// exclusivity, campaign budgets, priority order) with the largest total discount. Every figure comes from the stack's
// own functions (eligibility, grant, budgetRefusal; the winner is decided again by evaluateStack), so redeeming the
// answer as a stack gives exactly its totals.
//
// A combination is a set of offers; a stack applies its members by priority (higher first) and, within a priority,
// in the order it lists them. The best deal lists each set in one canonical order (`stackOrder`): FIXED discounts
// first (the price they set is then discounted further), then PERCENT (a share of more), then the rest (AMOUNT, UNIT
// and other types, worth the same or less later), larger first. The search is a depth-first branch and bound over
// the sets in that order: a member's contribution never exceeds what it gives alone (every discount takes a share of
// what is left, and what is left only shrinks), so a branch whose members alone could not beat the best found is cut.
// `exact` when the search finished within its node budget: every allowed set was then weighed.
import type { Order } from '../contract/checkout.schemas.js';
import type { VoucherSnapshot } from '../contract/voucher-snapshot.schemas.js';
import type { ZoneCalendar } from '../contract/zone-calendar.js';
import { budgetRefusal, effectivePriority, eligibility, grant, isExclusive, startOrder, type OrderState, type UseRequest } from './redemption.rules.js';
import { evaluateStack, type StackEntry, type StackEvaluation } from './stack.rules.js';

/** Nodes the search may visit before it answers the best found so far (exact: false). */
export const DEFAULT_MAX_NODES = 100_000;

export interface BestDealOptions {
  maxNodes?: number;
}

export interface BestDealResult {
  /** Indexes into the entries given, in the order the stack lists them. */
  members: number[];
  /** Every allowed combination was weighed. */
  exact: boolean;
  /** The chosen stack as evaluateStack decides it (ok), for its results and order totals. */
  evaluation: StackEvaluation;
  /** Search nodes visited (for tests and benches). */
  nodes: number;
}

interface Candidate {
  index: number;
  entry: StackEntry;
  voucher: VoucherSnapshot;
  /** Its request as the stack makes it (the order, the entry's amount): one object for every node that tries it. */
  request: UseRequest;
  /** What it gives alone: an upper bound of what it gives in any stack. */
  alone: number;
  priority: number;
  rank: number;
}

const TYPE_RANK: Record<string, number> = { FIXED: 0, PERCENT: 1 };
const typeRank = (v: VoucherSnapshot | undefined) => TYPE_RANK[v?.discount?.type ?? ''] ?? 2;

/**
 * The canonical order of a set of entries: priority (higher first, as the stack rules apply them), then FIXED, then
 * PERCENT, then the rest, then larger alone first, then the order given. `alone` (optional) is what each gives alone.
 */
export function stackOrder(entries: readonly StackEntry[], alone: readonly number[] = []): number[] {
  const priority = entries.map((e) => (e.voucher ? effectivePriority(e.voucher) : 0));
  const rank = entries.map((e) => typeRank(e.voucher));
  return entries
    .map((_, i) => i)
    .sort((a, b) => priority[b]! - priority[a]! || rank[a]! - rank[b]! || (alone[b] ?? 0) - (alone[a] ?? 0) || a - b);
}

/**
 * A copy of an order's running state that grant(apply) may move on without touching the original. grant gives the
 * state lines of its own (it copies them before spreading a discount, never changing a line it was given) and adds
 * into `discountShares` in place: the figures and that array are what a copy needs, not every line again (the search
 * copies a state for each member it tries). Should grant come to change a line in place, the search would weigh sets
 * wrongly, which the exhaustive property test (every set decided again by evaluateStack) is there to catch; a copy
 * that shares the figures fails it.
 */
function copyState(state: OrderState): OrderState {
  return { ...state, discountShares: state.discountShares.slice() };
}

/** Offers that could be in a stack at all: found, a discount (cards pay, they do not discount), eligible, giving more than 0 alone. */
function candidatesOf(entries: readonly StackEntry[], order: Order, now: number, calendar: ZoneCalendar): Candidate[] {
  const start = startOrder(order);
  const found: Candidate[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const v = entry.voucher;
    if (!v || v.type !== 'DISCOUNT' || seen.has(entry.code)) return;
    seen.add(entry.code);
    const request = { order, amount: entry.amount };
    if (eligibility(v, entry.use, request, now, calendar)) return;
    const given = grant(v, entry.use, request, start, false);
    // A campaign budget is not weighed here: after other members a smaller grant may fit what is left of it.
    if (given.kind !== 'DISCOUNT' || given.amount <= 0) return;
    found.push({ index, entry, voucher: v, request, alone: given.amount, priority: effectivePriority(v), rank: typeRank(v) });
  });
  return found;
}

/** The k largest `alone` among candidates[i..]: prefix sums per suffix, so a bound costs one look-up. */
function suffixBests(candidates: readonly Candidate[]): number[][] {
  const sums: number[][] = new Array(candidates.length + 1);
  sums[candidates.length] = [0];
  const sorted: number[] = [];
  for (let i = candidates.length - 1; i >= 0; i--) {
    const x = candidates[i]!.alone;
    let at = sorted.findIndex((y) => y < x);
    if (at === -1) at = sorted.length;
    sorted.splice(at, 0, x);
    const prefix = new Array<number>(sorted.length + 1);
    prefix[0] = 0;
    for (let k = 0; k < sorted.length; k++) prefix[k + 1] = prefix[k]! + sorted[k]!;
    sums[i] = prefix;
  }
  return sums;
}

interface Best {
  discount: number;
  members: number[];
}

export function bestDeal(
  entries: readonly StackEntry[],
  order: Order,
  stackLimit: number,
  now: number,
  calendar: ZoneCalendar,
  options: BestDealOptions = {},
): BestDealResult {
  const maxNodes = options.maxNodes ?? DEFAULT_MAX_NODES;
  const all = candidatesOf(entries, order, now, calendar);
  const ordered = stackOrder(all.map((c) => c.entry), all.map((c) => c.alone)).map((k) => all[k]!);
  const best: Best = { discount: 0, members: [] };
  const better = (discount: number, size: number) => discount > best.discount || (discount === best.discount && discount > 0 && size < best.members.length);
  let nodes = 0;

  // An exclusive offer stands alone: its stack of one gives what it gives alone.
  for (const c of ordered) {
    nodes += 1;
    const fits = !budgetRefusal(c.voucher, c.entry.use.budget, c.alone);
    if (isExclusive(c.voucher) && fits && stackLimit >= 1 && better(c.alone, 1)) Object.assign(best, { discount: c.alone, members: [c.index] });
  }
  const shared = ordered.filter((c) => !isExclusive(c.voucher));
  const bests = suffixBests(shared);
  let exhausted = false;
  const chosen: number[] = [];

  // What the members chosen so far took of each campaign's budget: set while a member is on the path, put back after.
  const spent = new Map<string, { uses: number; amount: number }>();
  const search = (i: number, state: OrderState, discount: number): void => {
    if (exhausted) return;
    if (++nodes > maxNodes) {
      exhausted = true;
      return;
    }
    if (better(discount, chosen.length)) Object.assign(best, { discount, members: [...chosen] });
    const slots = stackLimit - chosen.length;
    if (i >= shared.length || slots <= 0) return;
    const top = bests[i]!;
    const bound = discount + Math.min(state.remaining, top[Math.min(slots, top.length - 1)]!);
    if (bound < best.discount || (bound === best.discount && chosen.length + 1 >= best.members.length)) return;
    const c = shared[i]!;
    const next = copyState(state);
    const given = grant(c.voucher, c.entry.use, c.request, next, true);
    const campaign = c.voucher.campaign;
    const campaignSpent = campaign ? spent.get(campaign.id) : undefined;
    // A member that would give nothing only spends a use (and a budget's): never part of a better stack.
    if (given.amount > 0 && !budgetRefusal(c.voucher, c.entry.use.budget, given.amount, campaignSpent)) {
      if (campaign) spent.set(campaign.id, { uses: (campaignSpent?.uses ?? 0) + 1, amount: (campaignSpent?.amount ?? 0) + given.amount });
      chosen.push(c.index);
      search(i + 1, next, discount + given.amount);
      chosen.pop();
      if (campaign) {
        if (campaignSpent) spent.set(campaign.id, campaignSpent);
        else spent.delete(campaign.id);
      }
    }
    search(i + 1, state, discount);
  };
  search(0, startOrder(order), 0);

  // Decided again by the stack rules themselves: the answer is what redeeming it gives, or none.
  const decide = (members: number[]) => evaluateStack(members.map((i) => entries[i]!), order, stackLimit, now, calendar);
  const evaluation = decide(best.members);
  if (!evaluation.ok || evaluation.state.discountAmount !== best.discount) return { members: [], exact: false, evaluation: decide([]), nodes };
  return { members: best.members, exact: !exhausted, evaluation, nodes };
}
