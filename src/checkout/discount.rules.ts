// Discount math in integer minor units: what one voucher takes off what is left of an order, and the exact split of
// a discount across the order's items (largest remainder: the shares always add up to the total, no rounding drift).
import type { Discount } from '../contract/discount.schemas.js';

const PERCENT_SCALE = 1_000_000;

/**
 * floor(x / y) for integers 0 <= x < 2^53 and y > 0, exact: when x / y is not an integer it lies at least 1 / y below
 * the next one, more than the division's rounding error (at most (x / y) × 2^-53).
 */
const floorDiv = (x: number, y: number): number => Math.floor(x / y);

/**
 * round-half-up(amount × percent / 100), exact for percentages with up to 6 decimals. In doubles while every
 * intermediate stays below 2^53 (integers are exact there: every checkout's figures), else in BigInt.
 */
export function percentOf(amount: number, percent: number): number {
  const scaled = Math.round(percent * PERCENT_SCALE);
  const denominator = 100 * PERCENT_SCALE;
  const x = amount * scaled * 2 + denominator;
  if (amount >= 0 && scaled >= 0 && x <= Number.MAX_SAFE_INTEGER) return floorDiv(x, 2 * denominator);
  const d = BigInt(denominator);
  return Number((BigInt(amount) * BigInt(scaled) * 2n + d) / (2n * d));
}

export interface LineState {
  productId?: string | undefined;
  sku?: string | undefined;
  quantity: number;
  price: number;
  /** What is left of this line after earlier discounts. */
  remaining: number;
}

function matchesUnit(line: LineState, discount: { productId?: string | undefined; sku?: string | undefined }): boolean {
  if (discount.productId !== undefined && line.productId === discount.productId) return true;
  return discount.sku !== undefined && line.sku === discount.sku;
}

/** Indexes of the lines a discount is spread over: UNIT discounts only their product, others every line. */
export function discountedLines(discount: Discount, lines: readonly LineState[]): number[] {
  const all = lines.map((_, i) => i);
  return discount.type === 'UNIT' ? all.filter((i) => matchesUnit(lines[i]!, discount)) : all;
}

/**
 * The discount before per-voucher caps, for `remaining` left of the order. With `targets` (the lines a rule's
 * applicableTo selects) the discount is computed on what is left of those lines only: 10% off the shoes, not the cart.
 */
export function rawDiscount(discount: Discount, remaining: number, lines: readonly LineState[], targets?: readonly number[]): number {
  const base = targets ? Math.min(remaining, targets.reduce((sum, i) => sum + lines[i]!.remaining, 0)) : remaining;
  switch (discount.type) {
    case 'PERCENT': {
      const off = percentOf(base, discount.percentOff);
      return discount.amountLimit !== undefined ? Math.min(off, discount.amountLimit) : off;
    }
    case 'AMOUNT':
      return Math.min(discount.amountOff, base);
    case 'FIXED':
      return base > discount.fixedAmount ? base - discount.fixedAmount : 0;
    case 'UNIT': {
      let units = discount.unitOff;
      let off = 0;
      for (const [i, line] of lines.entries()) {
        if (units === 0) break;
        if (!matchesUnit(line, discount) || (targets && !targets.includes(i))) continue;
        const free = Math.min(units, line.quantity);
        off += Math.min(free * line.price, line.remaining);
        units -= free;
      }
      return off;
    }
  }
}

/** A voucher's contribution: its raw discount, at most maxDiscount, never more than what is left of the order. */
export function cappedDiscount(discount: Discount, remaining: number, lines: readonly LineState[], maxDiscount: number | null, targets?: readonly number[]): number {
  const raw = rawDiscount(discount, remaining, lines, targets);
  return Math.max(0, Math.min(raw, maxDiscount ?? Number.MAX_SAFE_INTEGER, remaining));
}

/**
 * Splits `total` into integer shares proportional to `weights` (largest remainder, ties to the earlier index).
 * Shares add up to exactly `total`; when total <= sum(weights) no share exceeds its weight. All-zero weights share equally.
 */
export function allocate(total: number, weights: readonly number[]): number[] {
  if (weights.length === 0) return [];
  let sum = 0;
  let negative = total < 0;
  for (const w of weights) {
    sum += w;
    if (w < 0) negative = true;
  }
  const basis = sum > 0 ? weights : weights.map(() => 1);
  const basisSum = sum > 0 ? sum : weights.length;
  // In doubles when total × basisSum (the largest product) fits below 2^53, as nearly every order does; else BigInt.
  if (!negative && total * basisSum <= Number.MAX_SAFE_INTEGER) return largestRemainder(total, basis, basisSum);
  return largestRemainderBig(total, basis, basisSum);
}

function largestRemainder(total: number, basis: readonly number[], basisSum: number): number[] {
  const shares = new Array<number>(basis.length);
  const remainders = new Array<{ i: number; r: number }>(basis.length);
  let left = total;
  for (let i = 0; i < basis.length; i++) {
    const product = total * basis[i]!;
    const share = floorDiv(product, basisSum);
    shares[i] = share;
    remainders[i] = { i, r: product - share * basisSum };
    left -= share;
  }
  remainders.sort((a, b) => (a.r === b.r ? a.i - b.i : b.r - a.r));
  for (const { i } of remainders) {
    if (left === 0) break;
    shares[i]! += 1;
    left -= 1;
  }
  return shares;
}

function largestRemainderBig(total: number, basis: readonly number[], basisSum: number): number[] {
  const t = BigInt(total);
  const sum = BigInt(basisSum);
  const shares = basis.map((w) => (t * BigInt(w)) / sum);
  const remainders = basis.map((w, i) => ({ i, r: (t * BigInt(w)) % sum }));
  let left = t - shares.reduce((a, b) => a + b, 0n);
  remainders.sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1));
  for (const { i } of remainders) {
    if (left === 0n) break;
    shares[i]! += 1n;
    left -= 1n;
  }
  return shares.map(Number);
}

/**
 * Spreads one voucher's discount over its lines (by what is left of each) and takes it off them. Returns the shares.
 * `only` narrows the lines to those a rule's applicableTo selects.
 */
export function spreadOverLines(discount: Discount | null, amount: number, lines: LineState[], only?: readonly number[]): number[] {
  const shares = lines.map(() => 0);
  if (lines.length === 0 || amount === 0) return shares;
  let targets = discount ? discountedLines(discount, lines) : lines.map((_, i) => i);
  if (only) targets = targets.filter((i) => only.includes(i));
  if (targets.length === 0) targets = lines.map((_, i) => i);
  const covered = targets.reduce((sum, i) => sum + lines[i]!.remaining, 0);
  // Lines that do not cover the discount (items summing below order.amount): spread over every line instead.
  if (covered < amount) targets = lines.map((_, i) => i);
  const split = allocate(amount, targets.map((i) => lines[i]!.remaining));
  targets.forEach((lineIndex, k) => {
    const share = split[k]!;
    shares[lineIndex] = share;
    lines[lineIndex]!.remaining = Math.max(0, lines[lineIndex]!.remaining - share);
  });
  return shares;
}
