// The token bucket and its fields on a hand-driven clock, the per-address grouping, and the RATE_LIMIT_* settings.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, rateLimitsFromEnvironment } from '../../src/config.js';
import { addressBucket } from '../../src/domains/access/rate-limit.js';
import { rateLimitPolicy, TokenBuckets } from '../../src/platform/rate-limit.js';

function clock() {
  const time = { now: 1_000 };
  return { time, buckets: new TokenBuckets({ maxBuckets: 100, now: () => time.now }) };
}

describe('token buckets', () => {
  it('lets a full burst through, then refuses with Retry-After until a token has dripped back', () => {
    const { time, buckets } = clock();
    const policy = rateLimitPolicy('key', 2, 4);
    const answers = Array.from({ length: 5 }, () => buckets.take('a', policy));
    expect(answers.map((a) => a.allowed)).toEqual([true, true, true, true, false]);
    expect(answers[0]!.headers).toEqual({ 'RateLimit-Policy': '"key";q=4;w=2', RateLimit: '"key";r=3;t=1' });
    expect(answers[3]!.headers.RateLimit).toBe('"key";r=0;t=2');
    expect(answers[4]).toEqual({
      allowed: false,
      retryAfterSeconds: 1,
      headers: { 'RateLimit-Policy': '"key";q=4;w=2', RateLimit: '"key";r=0;t=1', 'Retry-After': '1' },
    });
    time.now += 400; // 0.8 tokens
    expect(buckets.take('a', policy).allowed).toBe(false);
    time.now += 100; // 1 token
    expect(buckets.take('a', policy).allowed).toBe(true);
    expect(buckets.take('a', policy).allowed).toBe(false);
  });

  it('never holds more than the burst, however long the pause', () => {
    const { time, buckets } = clock();
    const policy = rateLimitPolicy('key', 10);
    buckets.take('a', policy);
    time.now += 3_600_000;
    const allowed = Array.from({ length: 11 }, () => buckets.take('a', policy).allowed);
    expect(allowed.filter(Boolean)).toHaveLength(10);
  });

  it('keeps callers apart', () => {
    const { buckets } = clock();
    const policy = rateLimitPolicy('key', 1, 1);
    expect(buckets.take('a', policy).allowed).toBe(true);
    expect(buckets.take('a', policy).allowed).toBe(false);
    expect(buckets.take('b', policy).allowed).toBe(true);
  });

  it('admits a batch larger than the burst when the bucket is full, and later requests wait out its debt', () => {
    const { time, buckets } = clock();
    const policy = rateLimitPolicy('key', 10, 10);
    expect(buckets.take('a', policy, 30).allowed).toBe(true);
    time.now += 1_000; // -20 + 10 = -10
    const refused = buckets.take('a', policy);
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 2 });
    time.now += 1_100;
    expect(buckets.take('a', policy).allowed).toBe(true);
  });

  it('applies a changed policy at once: the tokens held are capped at the new burst', () => {
    const { buckets } = clock();
    buckets.take('a', rateLimitPolicy('key', 100, 100));
    const smaller = rateLimitPolicy('key', 1, 2);
    expect([buckets.take('a', smaller), buckets.take('a', smaller), buckets.take('a', smaller)].map((a) => a.allowed)).toEqual([true, true, false]);
  });

  it('says when a bucket is empty without taking from it', () => {
    const { time, buckets } = clock();
    const policy = rateLimitPolicy('address', 1, 2);
    expect(buckets.exhausted('a', policy)).toBe(false);
    buckets.take('a', policy);
    buckets.take('a', policy);
    expect(buckets.exhausted('a', policy)).toBe(true);
    time.now += 1_000;
    expect(buckets.exhausted('a', policy)).toBe(false);
    expect(buckets.exhausted('a', policy)).toBe(false);
  });

  it('forgets the least recently used bucket past its bound (it comes back full)', () => {
    const time = { now: 0 };
    const buckets = new TokenBuckets({ maxBuckets: 2, now: () => time.now });
    const policy = rateLimitPolicy('key', 1, 1);
    buckets.take('a', policy);
    buckets.take('b', policy);
    buckets.take('c', policy);
    expect(buckets.take('a', policy).allowed).toBe(true);
  });
});

describe('client address buckets', () => {
  it('counts IPv4 per address and IPv6 per /64', () => {
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('::ffff:203.0.113.7')).toBe('::ffff:203.0.113.7');
    expect(addressBucket('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:0DB8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(addressBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket(undefined)).toBe('unknown');
  });
});

describe('RATE_LIMIT_* settings', () => {
  it('defaults to 50,000 requests per second per key and 20 (burst 100) per address, one process', () => {
    expect(loadConfig({}).rateLimits).toEqual({
      perKey: { requestsPerSecond: 50_000, burst: 50_000 },
      perAddress: { requestsPerSecond: 20, burst: 100 },
      processes: 1,
    });
  });

  it('takes a rate, a burst (default: the rate), 0 or off to disable, and the number of web processes', () => {
    expect(loadConfig({ RATE_LIMIT_PER_KEY: '50', RATE_LIMIT_PER_ADDRESS: 'off', RATE_LIMIT_PROCESSES: '4' }).rateLimits).toEqual({
      perKey: { requestsPerSecond: 50, burst: 50 },
      perAddress: undefined,
      processes: 4,
    });
    expect(loadConfig({ RATE_LIMIT_PER_KEY: '0', RATE_LIMIT_BURST_PER_ADDRESS: '7' }).rateLimits).toMatchObject({
      perKey: undefined,
      perAddress: { requestsPerSecond: 20, burst: 7 },
    });
    expect(rateLimitsFromEnvironment({ RATE_LIMIT_PER_KEY: '5', RATE_LIMIT_BURST_PER_KEY: '9', PORT: 'not looked at' }).perKey).toEqual({
      requestsPerSecond: 5,
      burst: 9,
    });
  });

  it('refuses anything else with one clear line', () => {
    expect(() => loadConfig({ RATE_LIMIT_PER_KEY: 'fast' })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_PER_KEY: '-1' })).toThrow(/RATE_LIMIT_PER_KEY/);
    expect(() => loadConfig({ RATE_LIMIT_BURST_PER_KEY: '0' })).toThrow(/RATE_LIMIT_BURST_PER_KEY/);
    expect(() => rateLimitsFromEnvironment({ RATE_LIMIT_PROCESSES: 'two' })).toThrow(/RATE_LIMIT_PROCESSES/);
  });
});
