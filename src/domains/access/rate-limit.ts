// Who gets which bucket: an API key runs under its own limit, else its workspace's default, else the server's
// (RATE_LIMIT_PER_KEY); other actors (staff sessions) under the server's; requests without a valid key under their
// client address's (RATE_LIMIT_PER_ADDRESS). Buckets live in this process's memory, no SQL per request: the limit
// comes with the verified key from the verifier's cache, which NOTIFY api_keys_changed refreshes when a limit changes.
// Several web processes do not share buckets: each enforces 1/processes of every limit (RATE_LIMIT_PROCESSES).
import type { Actor, Credentials } from '../../contract/actor.js';
import { rateLimitPolicy, TokenBuckets, type RateLimitDecision, type RateLimitPolicy } from '../../platform/rate-limit.js';
import type { ApiKeyVerifier } from './api-key-cache.js';
import type { RateLimitSetting } from './rate-limit.schemas.js';

export interface RateLimitSettings {
  /** The server default per key; undefined: keys without a limit of their own (or their workspace's) are not limited. */
  perKey: RateLimitSetting | undefined;
  /** Per client address, for requests that do not authenticate; undefined: off. */
  perAddress: RateLimitSetting | undefined;
  /** Web processes sharing the traffic; each enforces this share of every limit. */
  processes: number;
}

const MAX_BUCKETS = 100_000;

export class RequestRateLimiter {
  readonly #callers = new TokenBuckets({ maxBuckets: MAX_BUCKETS });
  readonly #addresses = new TokenBuckets({ maxBuckets: MAX_BUCKETS });
  /** The policy of each actor object the authenticators hand out (cached actors are the same object every time). */
  readonly #policyOfActor = new WeakMap<Actor, RateLimitPolicy | null>();
  readonly #policies = new Map<string, RateLimitPolicy>();
  readonly #keyDefault: RateLimitPolicy | undefined;
  readonly #perAddress: RateLimitPolicy | undefined;
  readonly #processes: number;

  constructor(
    private readonly verifier: ApiKeyVerifier,
    settings: RateLimitSettings,
  ) {
    this.#processes = settings.processes;
    this.#keyDefault = settings.perKey && this.#policy('key', settings.perKey);
    this.#perAddress = settings.perAddress && this.#policy('address', settings.perAddress);
  }

  /** Charges an authenticated request (`cost` operations) to its caller; undefined when no limit applies to it. */
  forActor(actor: Actor, cost: number): RateLimitDecision | undefined {
    let policy = this.#policyOfActor.get(actor);
    if (policy === undefined) {
      policy = this.#resolve(actor) ?? null;
      this.#policyOfActor.set(actor, policy);
    }
    if (!policy) return undefined;
    return this.#callers.take(actor.type === 'api_key' ? actor.id : `${actor.type}:${actor.id}`, policy, cost);
  }

  /** Charges a request that did not authenticate to its client address. */
  forUnauthenticated(address: string | undefined): RateLimitDecision | undefined {
    if (!this.#perAddress) return undefined;
    return this.#addresses.take(addressBucket(address), this.#perAddress);
  }

  /**
   * Refuses, before any key is looked up, a request from an address whose bucket is empty, unless it carries a key
   * that verified lately: guessing stops costing database reads (and a right guess looks like any other), while a
   * caller in use behind the same address (a NAT, a proxy) keeps working.
   */
  screen(address: string | undefined, credentials: Credentials): RateLimitDecision | undefined {
    const policy = this.#perAddress;
    if (!policy) return undefined;
    const bucket = addressBucket(address);
    if (!this.#addresses.exhausted(bucket, policy) || this.verifier.recognizes(credentials.authorization)) return undefined;
    return this.#addresses.take(bucket, policy);
  }

  #resolve(actor: Actor): RateLimitPolicy | undefined {
    const own = actor.type === 'api_key' ? this.verifier.rateLimitOf(actor) : undefined;
    return own ? this.#policy('key', own) : this.#keyDefault;
  }

  #policy(name: string, setting: RateLimitSetting): RateLimitPolicy {
    const id = `${name}:${setting.requestsPerSecond}:${setting.burst}`;
    let policy = this.#policies.get(id);
    if (!policy) {
      policy = rateLimitPolicy(name, setting.requestsPerSecond / this.#processes, Math.max(1, Math.ceil(setting.burst / this.#processes)));
      if (this.#policies.size < 10_000) this.#policies.set(id, policy);
    }
    return policy;
  }
}

/** IPv6 clients are counted per /64, the block one subscriber usually holds; IPv4 (also IPv4-mapped) per address. */
export function addressBucket(address: string | undefined): string {
  if (!address) return 'unknown';
  if (!address.includes(':') || address.startsWith('::ffff:')) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':') + '::/64';
}
