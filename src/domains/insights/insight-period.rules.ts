// The hour a refusal count is counted in (the UTC hour). Exact figures count in the start of the local hour of the
// workspace's zone (ZoneCalendar.rollupHour, contract/zone-calendar.ts). Pure; shared with the redemption engine.

/** The UTC hour of an instant: where refusal counts go (they are not exact figures, see the README). */
export function utcHour(nowMs: number): number {
  return Math.floor(nowMs / 3_600_000) * 3_600_000;
}
