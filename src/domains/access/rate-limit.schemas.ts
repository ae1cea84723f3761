// The rate limit a key, or a workspace for its keys, may set: a token bucket of `burst` requests refilled at
// `requestsPerSecond`.
import { z } from 'zod';

export const RateLimit = z
  .object({
    requestsPerSecond: z.number().int().min(1).max(1_000_000).meta({ description: 'Sustained requests per second (1..1000000).' }),
    burst: z
      .number()
      .int()
      .min(1)
      .max(10_000_000)
      .optional()
      .meta({ description: 'Requests that may come at once after a pause (the bucket size); default `requestsPerSecond`.' }),
  })
  .strict()
  .meta({
    id: 'RateLimit',
    description:
      'A token bucket per key. Every response carries `RateLimit-Policy` and `RateLimit` (IETF HTTPAPI draft); an empty ' +
      'bucket answers 429 `rate_limited` with `Retry-After`. A new limit applies within a second in every web process.',
  });
export type RateLimit = z.infer<typeof RateLimit>;

/** A limit as stored and enforced: the burst resolved. */
export interface RateLimitSetting {
  requestsPerSecond: number;
  burst: number;
}

export function rateLimitSetting(limit: RateLimit): RateLimitSetting {
  return { requestsPerSecond: limit.requestsPerSecond, burst: limit.burst ?? limit.requestsPerSecond };
}

/** The columns rate_limit_per_second and rate_limit_burst as the resource shows them (null: not set). */
export function rateLimitOfRow(row: { rate_limit_per_second: number | null; rate_limit_burst: number | null }): RateLimitSetting | null {
  return row.rate_limit_per_second === null ? null : { requestsPerSecond: row.rate_limit_per_second, burst: row.rate_limit_burst ?? row.rate_limit_per_second };
}
