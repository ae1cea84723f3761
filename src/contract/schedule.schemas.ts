// Schedules: the local days of the week and times of day a promotion applies, in an IANA time zone.
import { z } from 'zod';

/** The canonical zone names this runtime lists, and UTC (every runtime takes it), read once: a constant, not a cache. */
const CANONICAL_ZONES: ReadonlySet<string> = new Set(['UTC', ...(typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [])]);

/**
 * True for a time zone Intl knows. Canonical names are looked up; any other spelling Intl takes (`utc`, `europe/berlin`,
 * aliases such as `US/Eastern`) is tried, which costs a formatter (~80 µs): schemas run on writes, not on checkouts.
 */
export function isTimeZone(zone: string): boolean {
  if (CANONICAL_ZONES.has(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const TimeZone = z
  .string()
  .min(1)
  .max(100)
  .refine(isTimeZone, 'unknown time zone: use an IANA name such as Europe/Berlin')
  .meta({ description: 'An IANA time zone, e.g. Europe/Berlin.', example: 'Europe/Berlin' });

const Clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time of day HH:MM, 00:00 to 23:59');

/** Minutes since local midnight of an HH:MM (24:00 is 1440). */
export function minutesOf(clock: string): number {
  return Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));
}

export const TimeWindow = z
  .strictObject({
    start: Clock,
    end: z.union([Clock, z.literal('24:00')], { error: 'a time of day HH:MM, or 24:00 for the end of the day' }),
  })
  .refine((w) => minutesOf(w.start) < minutesOf(w.end), { message: 'start must be before end', path: ['end'] })
  .meta({ description: 'From start (included) to end (excluded), local time.' });
export type TimeWindow = z.infer<typeof TimeWindow>;

export const Schedule = z
  .strictObject({
    timeZone: TimeZone.optional().meta({ description: "Defaults to the workspace's time zone." }),
    daysOfWeek: z
      .array(z.number().int().min(0).max(6))
      .min(1)
      .max(7)
      .refine((days) => new Set(days).size === days.length, 'days must be unique')
      .optional()
      .meta({ description: 'Local days it applies, 0 = Sunday … 6 = Saturday; every day when left out.' }),
    windows: z.array(TimeWindow).min(1).max(10).optional().meta({ description: 'Local times it applies; all day when left out.' }),
  })
  .meta({ id: 'Schedule', description: 'When a promotion applies: local days of the week and times of day.' });
export type Schedule = z.infer<typeof Schedule>;
