// The hour an insight figure is counted in: the start of the hour in a time zone, so that the zone's days and hours
// are sums of whole buckets (in zones 30 or 45 minutes off UTC too). Pure; shared with the redemption engine.

const MAX_CACHED_ZONES = 1_000;
const minuteFormatters = new Map<string, Intl.DateTimeFormat>();
const lastHours = new Map<string, { minute: number; hour: number }>();

function minuteFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = minuteFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, minute: 'numeric' });
    if (minuteFormatters.size >= MAX_CACHED_ZONES) minuteFormatters.clear();
    minuteFormatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * The instant (ms) the hour containing `nowMs` began in `timeZone`. Zone offsets are whole minutes, so the answer
 * moves only when the UTC minute does: the last one per zone is kept (a batch asks once per redemption). An unknown
 * zone counts in UTC hours.
 */
export function rollupHour(nowMs: number, timeZone: string): number {
  const minute = Math.floor(nowMs / 60_000);
  const last = lastHours.get(timeZone);
  if (last && last.minute === minute) return last.hour;
  let localMinute: number;
  try {
    localMinute = Number(minuteFormatter(timeZone).formatToParts(nowMs).find((p) => p.type === 'minute')?.value ?? minute % 60);
  } catch {
    localMinute = ((minute % 60) + 60) % 60;
  }
  const hour = (minute - localMinute) * 60_000;
  if (lastHours.size >= MAX_CACHED_ZONES) lastHours.clear();
  lastHours.set(timeZone, { minute, hour });
  return hour;
}

/** The UTC hour of an instant: where refusal counts go (they are not exact figures, see the README). */
export function utcHour(nowMs: number): number {
  return Math.floor(nowMs / 3_600_000) * 3_600_000;
}
