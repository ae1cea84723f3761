// Integer money math in minor units: percentages rounded half up, exact proportional splits (largest remainder) and
// exact a × b / c. In doubles while every intermediate stays below 2^53 (integers are exact there), else in BigInt.
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

/** floor(a × b / c) for non-negative integers a, b and c > 0, exact. */
export function mulDivFloor(a: number, b: number, c: number): number {
  const product = a * b;
  if (product <= Number.MAX_SAFE_INTEGER) return floorDiv(product, c);
  return Number((BigInt(a) * BigInt(b)) / BigInt(c));
}

/**
 * Splits `total` into integer shares proportional to `weights` (largest remainder, ties to the earlier index).
 * Shares add up to exactly `total`; when total <= sum(weights) no share exceeds its weight. All-zero weights share equally.
 */
export function allocate(total: number, weights: readonly number[]): number[] {
  if (weights.length === 0) return [];
  // One weight takes it all (what the split below gives it too), without the split's arrays: most carts are one line.
  if (weights.length === 1) return [total];
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
  let left = total;
  for (let i = 0; i < basis.length; i++) {
    const share = floorDiv(total * basis[i]!, basisSum);
    shares[i] = share;
    left -= share;
  }
  // Exact splits (most) need no remainders; the others give the units left to the largest remainders.
  if (left === 0) return shares;
  const remainders = new Array<{ i: number; r: number }>(basis.length);
  for (let i = 0; i < basis.length; i++) remainders[i] = { i, r: total * basis[i]! - shares[i]! * basisSum };
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
