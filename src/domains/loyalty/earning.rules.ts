// Pure decisions of earning: how many points a rule gives (with the tier multiplier, in integer arithmetic), and when
// a grant activates and expires under the program's settings.
import type { EarningPoints } from './earning-rule.schemas.js';

const MAX = BigInt(Number.MAX_SAFE_INTEGER);
const DAY_MS = 86_400_000;

/**
 * FIXED: its points; PER_AMOUNT: floor(paid / every) × points. Times the multiplier (ten-thousandths), floored; capped
 * at 2^53-1 (the ledger refuses a balance past it anyway).
 */
export function earnedPoints(points: EarningPoints, paid: number, multiplierTenThousandths: bigint): number {
  const base = points.type === 'FIXED' ? BigInt(points.points) : (BigInt(Math.max(0, paid)) / BigInt(points.every)) * BigInt(points.points);
  const total = (base * multiplierTenThousandths) / 10_000n;
  return Number(total > MAX ? MAX : total);
}

export interface GrantTimes {
  activatesAt: Date | null;
  expiresAt: Date | null;
}

export interface ProgramTiming {
  pending?: { days: number } | undefined;
  expiration?: { type: 'NONE' | 'ROLLING' | 'FIXED_DATE'; days?: number | undefined; date?: string | undefined } | undefined;
}

/** When points earned now activate (pending days) and expire (ROLLING counts from activation). */
export function earningTimes(program: ProgramTiming, now: Date): GrantTimes {
  const activatesAt = program.pending ? new Date(now.getTime() + program.pending.days * DAY_MS) : null;
  return { activatesAt, expiresAt: expiryOf(program, activatesAt ?? now) };
}

/** The program's expiry for points that become active at `from`; null when they never expire. */
export function expiryOf(program: ProgramTiming, from: Date): Date | null {
  const e = program.expiration;
  if (!e || e.type === 'NONE') return null;
  if (e.type === 'ROLLING') return new Date(from.getTime() + (e.days ?? 0) * DAY_MS);
  return e.date ? new Date(e.date) : null;
}
