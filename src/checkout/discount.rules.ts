// Discount math in integer minor units: what one voucher takes off what is left of an order, and the exact split of
// a discount across the order's items and its shipping (largest remainder: the shares always add up to the total).
//
// Shipping (order.shipping.amount, part of order.amount) is taken off by FREE_SHIPPING only; every other discount
// applies to the rest of the order (its goods): with a target, to the matching items' line totals only.
import type { Discount } from '../contract/discount.schemas.js';
import { buyXGetYClaims } from './buy-x-get-y.rules.js';
import { matchingItems, type ItemFacts } from './item-target.rules.js';
import { allocate, percentOf } from './minor-units.rules.js';

export { allocate, percentOf } from './minor-units.rules.js';

export interface LineState extends ItemFacts {
  quantity: number;
  price: number;
  /** What is left of this line after earlier discounts. */
  remaining: number;
}

/** What is left of an order while discounts are taken off it in turn. */
export interface OrderLeft {
  /** Left to pay of the whole order (shipping included). */
  remaining: number;
  /** Left of the shipping (0 without shipping). */
  shippingLeft: number;
  lines: readonly LineState[];
}

/** Where one voucher's discount lands: on lines (by `weights`, in `lines` order) and on shipping. */
export interface DiscountPlan {
  amount: number;
  shipping: number;
  lines: number[];
  weights: number[];
}

function matchesUnit(line: LineState, discount: { productId?: string | undefined; sku?: string | undefined }): boolean {
  if (discount.productId !== undefined && line.productId === discount.productId) return true;
  return discount.sku !== undefined && line.sku === discount.sku;
}

const targetOf = (discount: Discount) => ('target' in discount ? discount.target : undefined);

/**
 * Indexes of the lines a discount applies to: its target's (UNIT: its product's too), within `only` (the lines a
 * rule's applicableTo selects) when given; every line for a discount without either.
 */
export function discountedLines(discount: Discount, lines: readonly LineState[], only?: readonly number[]): number[] {
  const targeted = matchingItems(lines, targetOf(discount), only);
  return discount.type === 'UNIT' ? targeted.filter((i) => matchesUnit(lines[i]!, discount)) : targeted;
}

const goodsLeft = (order: OrderLeft) => Math.max(0, order.remaining - order.shippingLeft);
const sumRemaining = (lines: readonly LineState[], indexes: readonly number[]) => indexes.reduce((sum, i) => sum + lines[i]!.remaining, 0);

function unitOff(discount: Extract<Discount, { type: 'UNIT' }>, lines: readonly LineState[], indexes: readonly number[]): number {
  let units = discount.unitOff;
  let off = 0;
  for (const i of indexes) {
    if (units === 0) break;
    const line = lines[i]!;
    const free = Math.min(units, line.quantity);
    off += Math.min(free * line.price, line.remaining);
    units -= free;
  }
  return off;
}

/**
 * Where a discount would land, capped by maxDiscount and by what is left (shipping for FREE_SHIPPING, the goods for
 * the others). Lines are weighed by what is left of them, except BUY_X_GET_Y's, weighed by what it gives each.
 */
export function planDiscount(discount: Discount, order: OrderLeft, maxDiscount: number | null, only?: readonly number[]): DiscountPlan {
  const cap = (raw: number, left: number) => Math.max(0, Math.min(raw, maxDiscount ?? Number.MAX_SAFE_INTEGER, left));
  const { lines } = order;
  if (discount.type === 'FREE_SHIPPING') {
    const amount = cap(order.shippingLeft, order.remaining);
    return { amount, shipping: amount, lines: [], weights: [] };
  }
  const goods = goodsLeft(order);
  if (discount.type === 'BUY_X_GET_Y') {
    const claims = buyXGetYClaims(discount, lines, only);
    const indexes = claims.flatMap((c, i) => (c > 0 ? [i] : []));
    const weights = indexes.map((i) => claims[i]!);
    return { amount: cap(weights.reduce((a, b) => a + b, 0), goods), shipping: 0, lines: indexes, weights };
  }
  const targeted = discount.type === 'UNIT' || targetOf(discount) !== undefined || only !== undefined;
  const indexes = targeted ? discountedLines(discount, lines, only) : lines.map((_, i) => i);
  const base = targeted ? Math.min(goods, sumRemaining(lines, indexes)) : goods;
  let raw: number;
  switch (discount.type) {
    case 'PERCENT': {
      const off = percentOf(base, discount.percentOff);
      raw = discount.amountLimit !== undefined ? Math.min(off, discount.amountLimit) : off;
      break;
    }
    case 'AMOUNT':
      raw = Math.min(discount.amountOff, base);
      break;
    case 'FIXED':
      raw = base > discount.fixedAmount ? base - discount.fixedAmount : 0;
      break;
    case 'UNIT':
      raw = unitOff(discount, lines, indexes);
      break;
  }
  return { amount: cap(raw, goods), shipping: 0, lines: indexes, weights: indexes.map((i) => lines[i]!.remaining) };
}

/** The discount before per-voucher caps, for `remaining` left of an order without shipping (see planDiscount). */
export function rawDiscount(discount: Discount, remaining: number, lines: readonly LineState[], targets?: readonly number[]): number {
  return planDiscount(discount, { remaining, shippingLeft: 0, lines }, null, targets).amount;
}

/** A voucher's contribution: its raw discount, at most maxDiscount, never more than what is left of the order. */
export function cappedDiscount(discount: Discount, remaining: number, lines: readonly LineState[], maxDiscount: number | null, targets?: readonly number[]): number {
  return planDiscount(discount, { remaining, shippingLeft: 0, lines }, maxDiscount, targets).amount;
}

/**
 * A line of an item (or of another line) with `remaining` left of it: a literal of LineState's own fields, since a
 * spread copy of a parsed item or a line measured ~0.7 µs a line (a slow clone), paid for every voucher a
 * qualification or a best-deal search tries.
 */
export function lineWith(line: ItemFacts & { quantity: number; price: number }, remaining: number): LineState {
  return {
    productId: line.productId,
    sku: line.sku,
    quantity: line.quantity,
    price: line.price,
    remaining,
    categories: line.categories,
    collections: line.collections,
    metadata: line.metadata,
  };
}

/**
 * Takes a planned discount off the lines: its line part split by the plan's weights (largest remainder, ties to the
 * earlier line), so each share stays within its line. When the planned lines hold less than the amount (items that
 * sum below order.amount, a plan without lines), the line part is spread over every line by what is left of it.
 * Returns the share of each line. A line it takes something off is replaced in `lines` by a changed copy: the line
 * objects given are never changed, so states that share them (a best-deal search's) stay apart.
 */
export function spreadPlan(plan: DiscountPlan, lines: LineState[]): number[] {
  const shares = lines.map(() => 0);
  const amount = plan.amount - plan.shipping;
  if (lines.length === 0 || amount <= 0) return shares;
  let indexes = plan.lines;
  let weights = plan.weights;
  if (indexes.length === 0 || weights.reduce((a, b) => a + b, 0) < amount) {
    indexes = lines.map((_, i) => i);
    weights = lines.map((l) => l.remaining);
  }
  const split = allocate(amount, weights);
  for (let k = 0; k < indexes.length; k++) {
    const lineIndex = indexes[k]!;
    const share = split[k]!;
    shares[lineIndex] = share;
    if (share !== 0) lines[lineIndex] = lineWith(lines[lineIndex]!, Math.max(0, lines[lineIndex]!.remaining - share));
  }
  return shares;
}
