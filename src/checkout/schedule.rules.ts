// Whether an instant falls inside a schedule, in the schedule's time zone (else the caller's default); pure.
import { minutesOf, type Schedule } from '../contract/schedule.schemas.js';
import type { ZoneCalendar } from '../contract/zone-calendar.js';

/** True when the local day is one of daysOfWeek (if given) and the local time is in one window [start, end) (if given). */
export function withinSchedule(schedule: Schedule, nowMs: number, defaultTimeZone: string, calendar: ZoneCalendar): boolean {
  const local = calendar.timeFacts(nowMs, schedule.timeZone ?? defaultTimeZone);
  if (schedule.daysOfWeek && !schedule.daysOfWeek.includes(local.dayOfWeek)) return false;
  if (!schedule.windows) return true;
  const minute = local.hour * 60 + local.minute;
  return schedule.windows.some((w) => minutesOf(w.start) <= minute && minute < minutesOf(w.end));
}
