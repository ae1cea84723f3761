// The pure earning decisions: points of FIXED and PER_AMOUNT rules with tier multipliers in integer arithmetic, and
// the activation and expiry instants a program's settings give.
import { describe, expect, it } from 'vitest';
import { earnedPoints, earningTimes, expiryOf } from '../../src/domains/loyalty/earning.rules.js';

describe('earnedPoints', () => {
  it('counts floor(paid / every) × points, times the multiplier, floored, without float error', () => {
    expect(earnedPoints({ type: 'PER_AMOUNT', every: 100, points: 1 }, 8_950, 10_000n)).toBe(89);
    expect(earnedPoints({ type: 'PER_AMOUNT', every: 100, points: 3 }, 99, 10_000n)).toBe(0);
    expect(earnedPoints({ type: 'FIXED', points: 100 }, 0, 11_500n)).toBe(115); // 100 × 1.15 is 114.999… in floats
    expect(earnedPoints({ type: 'FIXED', points: 3 }, 0, 15_000n)).toBe(4);
    expect(earnedPoints({ type: 'FIXED', points: Number.MAX_SAFE_INTEGER }, 0, 20_000n)).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('earningTimes', () => {
  const now = new Date('2026-11-24T10:00:00.000Z');
  it('activates after the pending days and expires ROLLING days after activation, FIXED_DATE at the date, NONE never', () => {
    expect(earningTimes({}, now)).toEqual({ activatesAt: null, expiresAt: null });
    expect(earningTimes({ pending: { days: 14 }, expiration: { type: 'ROLLING', days: 30 } }, now)).toEqual({
      activatesAt: new Date('2026-12-08T10:00:00.000Z'),
      expiresAt: new Date('2027-01-07T10:00:00.000Z'),
    });
    expect(expiryOf({ expiration: { type: 'FIXED_DATE', date: '2027-01-01T00:00:00.000Z' } }, now)).toEqual(new Date('2027-01-01T00:00:00.000Z'));
    expect(expiryOf({ expiration: { type: 'NONE' } }, now)).toBeNull();
  });
});
