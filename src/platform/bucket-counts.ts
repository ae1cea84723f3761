// Histogram counts kept where a Prometheus client cannot be (a worker thread): fixed bounds, a plain snapshot that
// crosses postMessage, and the sum of several snapshots. metrics-registry.ts exposes them as a histogram.

/** Per bucket (not cumulative), the last one above the highest bound (+Inf); with the sum and count observed. */
export interface BucketSnapshot {
  bounds: readonly number[];
  counts: number[];
  sum: number;
  count: number;
}

export class BucketCounts {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }

  snapshot(): BucketSnapshot {
    return { bounds: this.bounds, counts: [...this.counts], sum: this.sum, count: this.count };
  }
}

/** The sum of snapshots taken with the same bounds (several partitions); undefined when there are none. */
export function addSnapshots(snapshots: readonly BucketSnapshot[]): BucketSnapshot | undefined {
  const [first, ...rest] = snapshots;
  if (!first) return undefined;
  const total = { bounds: first.bounds, counts: [...first.counts], sum: first.sum, count: first.count };
  for (const s of rest) {
    s.counts.forEach((c, i) => (total.counts[i] = (total.counts[i] ?? 0) + c));
    total.sum += s.sum;
    total.count += s.count;
  }
  return total;
}
