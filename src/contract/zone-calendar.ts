// Instants read in IANA time zones: the local day of week and time (schedules, rule conditions), the budget periods and
// the start of the local hour (insight rollups). Pure, no I/O; an instance keeps Intl formatters and last answers per zone.

/** The local day of week (0 = Sunday), hour (0-23) and minute of an instant. */
export interface LocalTime {
  dayOfWeek: number;
  hour: number;
  minute: number;
}

/** The budget periods that contain an instant: 'day:2026-11-21', 'week:2026-11-16' (its Monday), 'month:2026-11'. */
export interface BudgetPeriods {
  day: string;
  week: string;
  month: string;
}

/** A zone's last answer, kept for the UTC minute it was asked in. */
interface Last<T> {
  minute: number;
  value: T;
}

const MAX_ZONES = 1_000;
const WEEKDAYS: Readonly<Record<string, number>> = Object.freeze({ Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 });

/** Keeps at most MAX_ZONES entries: past that the map starts again (zones in use are few; a flood of names is not). */
function remember<K, V>(map: Map<K, V>, key: K, value: V): V {
  if (map.size >= MAX_ZONES) map.clear();
  map.set(key, value);
  return value;
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');
const isoDate = (year: number, month: number, day: number) => `${pad(year, 4)}-${pad(month)}-${pad(day)}`;

/**
 * One per process root (the web process's composition, each partition thread). Local readings cannot change within
 * one UTC minute (zone offsets are whole minutes), so the last answer per zone is kept: a decision over many vouchers,
 * or a batch of redemptions, formats once. Formatting is the expensive part; the formatters are kept per zone too.
 */
export class ZoneCalendar {
  private readonly timeFormats = new Map<string, Intl.DateTimeFormat>();
  private readonly dateFormats = new Map<string, Intl.DateTimeFormat>();
  private readonly minuteFormats = new Map<string, Intl.DateTimeFormat>();
  private readonly lastTimes = new Map<string, Last<LocalTime>>();
  private readonly lastPeriods = new Map<string, Last<BudgetPeriods>>();
  private readonly lastHours = new Map<string, Last<number>>();

  /** The local day of week, hour and minute of an instant in a zone; RangeError for an unknown zone. */
  timeFacts(nowMs: number, timeZone: string): LocalTime {
    const utcMinute = Math.floor(nowMs / 60_000);
    const last = this.lastTimes.get(timeZone);
    if (last && last.minute === utcMinute) return last.value;
    let dayOfWeek = 0;
    let hour = 0;
    let minute = 0;
    for (const part of this.timeFormat(timeZone).formatToParts(nowMs)) {
      if (part.type === 'weekday') dayOfWeek = WEEKDAYS[part.value] ?? 0;
      else if (part.type === 'hour') hour = Number(part.value) % 24;
      else if (part.type === 'minute') minute = Number(part.value);
    }
    return remember(this.lastTimes, timeZone, { minute: utcMinute, value: { dayOfWeek, hour, minute } }).value;
  }

  /**
   * The keys of the day, ISO week (named by its Monday) and month that contain `nowMs` in `timeZone`, as
   * campaign_budget_usage rows are keyed; RangeError for an unknown zone (before anything is kept).
   */
  budgetPeriods(nowMs: number, timeZone: string): BudgetPeriods {
    const minute = Math.floor(nowMs / 60_000);
    const last = this.lastPeriods.get(timeZone);
    if (last && last.minute === minute) return last.value;
    return remember(this.lastPeriods, timeZone, { minute, value: this.periodsOf(nowMs, timeZone) }).value;
  }

  /**
   * The instant (ms) the hour containing `nowMs` began in `timeZone`, so that the zone's days and hours are sums of
   * whole hourly buckets (in zones 30 or 45 minutes off UTC too). An unknown zone counts in UTC hours.
   */
  rollupHour(nowMs: number, timeZone: string): number {
    const minute = Math.floor(nowMs / 60_000);
    const last = this.lastHours.get(timeZone);
    if (last && last.minute === minute) return last.value;
    let localMinute: number;
    try {
      localMinute = Number(this.minuteFormat(timeZone).formatToParts(nowMs).find((p) => p.type === 'minute')?.value ?? minute % 60);
    } catch {
      localMinute = ((minute % 60) + 60) % 60;
    }
    return remember(this.lastHours, timeZone, { minute, value: (minute - localMinute) * 60_000 }).value;
  }

  private periodsOf(nowMs: number, timeZone: string): BudgetPeriods {
    let year = 0;
    let month = 0;
    let day = 0;
    for (const part of this.dateFormat(timeZone).formatToParts(nowMs)) {
      if (part.type === 'year') year = Number(part.value);
      else if (part.type === 'month') month = Number(part.value);
      else if (part.type === 'day') day = Number(part.value);
    }
    // Calendar arithmetic on the local date, done in UTC where no day is skipped or repeated.
    const local = new Date(Date.UTC(year, month - 1, day));
    local.setUTCFullYear(year);
    const sinceMonday = (local.getUTCDay() + 6) % 7;
    const monday = new Date(local.getTime() - sinceMonday * 86_400_000);
    return {
      day: `day:${isoDate(year, month, day)}`,
      week: `week:${isoDate(monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate())}`,
      month: `month:${pad(year, 4)}-${pad(month)}`,
    };
  }

  // Each throws RangeError for an unknown zone, before anything is kept.
  private timeFormat(timeZone: string): Intl.DateTimeFormat {
    return (
      this.timeFormats.get(timeZone) ??
      remember(this.timeFormats, timeZone, new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }))
    );
  }

  private dateFormat(timeZone: string): Intl.DateTimeFormat {
    return (
      this.dateFormats.get(timeZone) ??
      remember(
        this.dateFormats,
        timeZone,
        new Intl.DateTimeFormat('en-US', { timeZone, calendar: 'gregory', numberingSystem: 'latn', year: 'numeric', month: 'numeric', day: 'numeric' }),
      )
    );
  }

  private minuteFormat(timeZone: string): Intl.DateTimeFormat {
    return this.minuteFormats.get(timeZone) ?? remember(this.minuteFormats, timeZone, new Intl.DateTimeFormat('en-US', { timeZone, minute: 'numeric' }));
  }
}
