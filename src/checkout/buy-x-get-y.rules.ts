// BUY_X_GET_Y: each group of buy.quantity units of the buy target gives get.quantity units of the get target (the buy
// target when none is given) at get.percentOff, at most maxApplications groups; a unit counts in one group only.
//
// Counted per line, never unit by unit (a line may hold a million units):
// - units split into buy-only (B), get-only (G) and both (C) by the targets their line matches; the number of groups
//   n is the largest with n·Y ≤ G + C, n·X ≤ B + C and n·(X + Y) ≤ B + G + C (enough units for both roles, each unit
//   in one), capped by maxApplications;
// - the n·Y units given are the cheapest of the get target (by what is left of their line per unit, ties to the
//   earlier line), taking at most C − max(0, n·X − B) units that could also be bought, so the buy side stays whole;
// - a line's f given units are worth what is left of the line × f / quantity, rounded down (exact while no earlier
//   discount touched the line: f × price), and give percentOff of that, rounded half up per line: each line's
//   rounding stays on that line, and the shares are the discount's per-item discountAmount.
import type { Discount } from '../contract/discount.schemas.js';
import { targetMatches, type ItemFacts } from './item-target.rules.js';
import { mulDivFloor, percentOf } from './minor-units.rules.js';

type BuyXGetY = Extract<Discount, { type: 'BUY_X_GET_Y' }>;

export interface UnitLine extends ItemFacts {
  quantity: number;
  /** What is left of the line after earlier discounts. */
  remaining: number;
}

/** Groups formed from buyOnly, getOnly and both units (see above), at most `cap`. */
export function groupsOf(x: number, y: number, buyOnly: number, getOnly: number, both: number, cap = Number.MAX_SAFE_INTEGER): number {
  return Math.max(0, Math.min(Math.floor((getOnly + both) / y), Math.floor((buyOnly + both) / x), Math.floor((buyOnly + getOnly + both) / (x + y)), cap));
}

/** Units given per line (0 for lines not given), for the lines in `only` (every line without it). */
export function unitsGiven(discount: BuyXGetY, lines: readonly UnitLine[], only?: readonly number[]): number[] {
  const given = lines.map(() => 0);
  const getTarget = discount.get.target ?? discount.buy.target;
  let buyOnly = 0;
  let getOnly = 0;
  let both = 0;
  const gettable: Array<{ index: number; both: boolean }> = [];
  for (const index of only ?? lines.map((_, i) => i)) {
    const line = lines[index]!;
    const buys = targetMatches(line, discount.buy.target);
    const gets = targetMatches(line, getTarget);
    if (buys && gets) both += line.quantity;
    else if (buys) buyOnly += line.quantity;
    else if (gets) getOnly += line.quantity;
    if (gets) gettable.push({ index, both: buys });
  }
  const groups = groupsOf(discount.buy.quantity, discount.get.quantity, buyOnly, getOnly, both, discount.maxApplications);
  if (groups === 0) return given;
  let wanted = groups * discount.get.quantity;
  let shared = both - Math.max(0, groups * discount.buy.quantity - buyOnly);
  const perUnit = (i: number) => lines[i]!.remaining / lines[i]!.quantity;
  gettable.sort((a, b) => perUnit(a.index) - perUnit(b.index) || a.index - b.index);
  for (const { index, both: isShared } of gettable) {
    if (wanted === 0) break;
    const take = Math.min(lines[index]!.quantity, wanted, isShared ? shared : Number.MAX_SAFE_INTEGER);
    if (isShared) shared -= take;
    given[index] = take;
    wanted -= take;
  }
  return given;
}

/** What the discount takes off each line (its claim), before any cap. */
export function buyXGetYClaims(discount: BuyXGetY, lines: readonly UnitLine[], only?: readonly number[]): number[] {
  return unitsGiven(discount, lines, only).map((units, i) => {
    if (units === 0) return 0;
    const line = lines[i]!;
    const worth = units === line.quantity ? line.remaining : mulDivFloor(line.remaining, units, line.quantity);
    return percentOf(worth, discount.get.percentOff ?? 100);
  });
}
