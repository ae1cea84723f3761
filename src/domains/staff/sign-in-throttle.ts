// Sign-in throttling: at most N failed attempts per email and M per client address within a sliding window. An
// attempt is counted when it starts (before the slow password check), so a burst of parallel guesses cannot slip
// past the limit; a success takes its own count back and clears the email's failures. Per process, in memory.
import { LRUCache } from 'lru-cache';
import type { SignInAttempt, SignInDecision, SignInGate } from '../../contract/service-settings.js';

export interface ThrottleLimits {
  maxFailuresPerEmail: number;
  maxFailuresPerAddress: number;
  windowMs: number;
}

type Attempt = SignInAttempt;
type ThrottleDecision = SignInDecision;

export class SignInThrottle implements SignInGate {
  readonly #byEmail: LRUCache<string, number[]>;
  readonly #byAddress: LRUCache<string, number[]>;

  constructor(readonly limits: ThrottleLimits) {
    const options = { max: 100_000, ttl: limits.windowMs };
    this.#byEmail = new LRUCache<string, number[]>(options);
    this.#byAddress = new LRUCache<string, number[]>(options);
  }

  begin(email: string, address: string, now = Date.now()): ThrottleDecision {
    const emailTimes = this.#recent(this.#byEmail, email, now);
    const addressTimes = this.#recent(this.#byAddress, address, now);
    const waits = [
      emailTimes.length >= this.limits.maxFailuresPerEmail ? emailTimes[emailTimes.length - this.limits.maxFailuresPerEmail]! : undefined,
      addressTimes.length >= this.limits.maxFailuresPerAddress ? addressTimes[addressTimes.length - this.limits.maxFailuresPerAddress]! : undefined,
    ].filter((t): t is number => t !== undefined);
    if (waits.length) {
      const freeAt = Math.max(...waits) + this.limits.windowMs;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now) / 1000)) };
    }
    emailTimes.push(now);
    addressTimes.push(now);
    this.#byEmail.set(email, emailTimes);
    this.#byAddress.set(address, addressTimes);
    return { allowed: true, attempt: { email, address, at: now } };
  }

  /** The password was right: this attempt was no failure, and the email starts afresh. */
  succeeded(attempt: Attempt): void {
    this.#byEmail.delete(attempt.email);
    const times = this.#byAddress.get(attempt.address);
    const at = times?.indexOf(attempt.at) ?? -1;
    if (times && at >= 0) times.splice(at, 1);
  }

  #recent(cache: LRUCache<string, number[]>, key: string, now: number): number[] {
    const since = now - this.limits.windowMs;
    return (cache.get(key) ?? []).filter((t) => t > since);
  }
}
