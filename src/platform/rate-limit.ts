// Token buckets in memory (one per caller, bounded by an LRU) and the IETF HTTPAPI RateLimit fields that report them
// (draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy: "name";q=..;w=..`, `RateLimit: "name";r=..;t=..`).
//
// Hand-rolled on purpose (the bucket is the 20 lines of take()): rate-limiter-flexible's in-memory limiter counts a
// fixed window, answers with a Promise that rejects when over, and keeps a timer per key; the `limiter` package's
// TokenBucket starts empty, cannot say when the next token comes (Retry-After), and would still need the bounded store
// and the fields, which are the rest of this file. No timers, no promises: the hot path pays a Map lookup and a few
// multiplications.
import { LRUCache } from 'lru-cache';

export interface RateLimitPolicy {
  /** The policy's name in the fields (`"key"`, `"address"`). */
  readonly name: string;
  /** Tokens added per second. */
  readonly rate: number;
  /** The bucket's capacity: requests that may come at once after a pause. */
  readonly burst: number;
  /** The RateLimit-Policy field value, formatted once. */
  readonly field: string;
}

/** q is the bucket's capacity, w the whole seconds an empty bucket takes to fill (q=rate;w=1 when burst = rate). */
export function rateLimitPolicy(name: string, rate: number, burst: number = rate): RateLimitPolicy {
  if (!(rate > 0) || !(burst >= 1)) throw new Error(`a rate limit needs a positive rate and a burst of at least 1 (got ${rate}, ${burst})`);
  const window = Math.max(1, Math.ceil(burst / rate));
  return Object.freeze({ name, rate, burst, field: `"${name}";q=${Math.floor(burst)};w=${window}` });
}

export interface RateLimitDecision {
  allowed: boolean;
  /** RateLimit-Policy and RateLimit, plus Retry-After when refused. */
  headers: Record<string, string>;
  /** Whole seconds until the request would be let through (0 when it was). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  /** performance.now() of the last refill. */
  at: number;
}

export interface TokenBucketsOptions {
  /** Buckets kept at most; the least recently used one is dropped (it starts full again when it comes back). */
  maxBuckets: number;
  now?: () => number;
}

export class TokenBuckets {
  readonly #buckets: LRUCache<string, Bucket>;
  readonly #now: () => number;

  constructor(options: TokenBucketsOptions) {
    this.#buckets = new LRUCache({ max: options.maxBuckets });
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * Takes `cost` tokens from the caller's bucket. A request is let through when the bucket holds min(cost, burst)
   * tokens; it then takes its whole cost, possibly into debt (a batch larger than the burst), which later requests
   * wait out. A changed policy applies at once: the tokens held are capped at the new burst.
   */
  take(id: string, policy: RateLimitPolicy, cost = 1): RateLimitDecision {
    const bucket = this.#refill(id, policy);
    const needed = Math.min(cost, policy.burst);
    if (bucket.tokens >= needed) {
      bucket.tokens -= cost;
      return { allowed: true, headers: fields(policy, bucket.tokens, secondsUntilFull(policy, bucket.tokens)), retryAfterSeconds: 0 };
    }
    const retryAfter = Math.max(1, Math.ceil((needed - bucket.tokens) / policy.rate));
    // r=0 holds for exactly the Retry-After seconds, so the two fields agree (the draft's section 6).
    const headers = fields(policy, 0, retryAfter);
    headers['Retry-After'] = String(retryAfter);
    return { allowed: false, headers, retryAfterSeconds: retryAfter };
  }

  /** Whether the bucket is empty now (less than one token), without taking anything. */
  exhausted(id: string, policy: RateLimitPolicy): boolean {
    if (!this.#buckets.has(id)) return false;
    return this.#refill(id, policy).tokens < 1;
  }

  #refill(id: string, policy: RateLimitPolicy): Bucket {
    const now = this.#now();
    let bucket = this.#buckets.get(id);
    if (!bucket) {
      bucket = { tokens: policy.burst, at: now };
      this.#buckets.set(id, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(policy.burst, bucket.tokens + ((now - bucket.at) / 1000) * policy.rate);
    bucket.at = now;
    return bucket;
  }
}

function secondsUntilFull(policy: RateLimitPolicy, tokens: number): number {
  return Math.ceil(Math.max(0, policy.burst - tokens) / policy.rate);
}

function fields(policy: RateLimitPolicy, tokens: number, seconds: number): Record<string, string> {
  return { 'RateLimit-Policy': policy.field, RateLimit: `"${policy.name}";r=${Math.max(0, Math.floor(tokens))};t=${seconds}` };
}
