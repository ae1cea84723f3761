// Schedules: local days and [start, end) windows in the schedule's zone (else the default), and what the schema refuses.
import { describe, expect, it } from 'vitest';
import { withinSchedule } from '../../src/checkout/schedule.rules.js';
import { Schedule } from '../../src/contract/schedule.schemas.js';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';

const at = (iso: string) => Date.parse(iso);
const calendar = new ZoneCalendar();

describe('withinSchedule', () => {
  it('holds always for an empty schedule', () => {
    expect(withinSchedule({}, at('2026-11-21T03:00:00Z'), 'UTC', calendar)).toBe(true);
  });

  it('checks the local day of the week in the schedule zone, not in UTC', () => {
    const sundays = { timeZone: 'Europe/Berlin', daysOfWeek: [0] };
    // Saturday 23:30 UTC is Sunday 00:30 in Berlin.
    expect(withinSchedule(sundays, at('2026-11-21T23:30:00Z'), 'UTC', calendar)).toBe(true);
    expect(withinSchedule(sundays, at('2026-11-21T22:30:00Z'), 'UTC', calendar)).toBe(false);
    expect(withinSchedule({ daysOfWeek: [0] }, at('2026-11-21T23:30:00Z'), 'UTC', calendar)).toBe(false);
    expect(withinSchedule({ daysOfWeek: [0] }, at('2026-11-21T23:30:00Z'), 'Europe/Berlin', calendar)).toBe(true);
  });

  it('includes the start of a window and excludes its end', () => {
    const happyHour = { timeZone: 'UTC', windows: [{ start: '17:00', end: '19:00' }] };
    expect(withinSchedule(happyHour, at('2026-11-20T16:59:00Z'), 'UTC', calendar)).toBe(false);
    expect(withinSchedule(happyHour, at('2026-11-20T17:00:00Z'), 'UTC', calendar)).toBe(true);
    expect(withinSchedule(happyHour, at('2026-11-20T18:59:59Z'), 'UTC', calendar)).toBe(true);
    expect(withinSchedule(happyHour, at('2026-11-20T19:00:00Z'), 'UTC', calendar)).toBe(false);
  });

  it('holds in any of several windows, up to 24:00 for the end of the day', () => {
    const schedule = { windows: [{ start: '06:00', end: '09:30' }, { start: '22:00', end: '24:00' }] };
    expect(withinSchedule(schedule, at('2026-11-20T09:29:00Z'), 'UTC', calendar)).toBe(true);
    expect(withinSchedule(schedule, at('2026-11-20T12:00:00Z'), 'UTC', calendar)).toBe(false);
    expect(withinSchedule(schedule, at('2026-11-20T23:59:59Z'), 'UTC', calendar)).toBe(true);
    expect(withinSchedule(schedule, at('2026-11-21T00:00:00Z'), 'UTC', calendar)).toBe(false);
  });

  it('needs both the day and the window to hold', () => {
    const weekdayMornings = { timeZone: 'America/New_York', daysOfWeek: [1, 2, 3, 4, 5], windows: [{ start: '08:00', end: '12:00' }] };
    expect(withinSchedule(weekdayMornings, at('2026-11-20T14:00:00Z'), 'UTC', calendar)).toBe(true); // Friday 09:00 in New York
    expect(withinSchedule(weekdayMornings, at('2026-11-21T14:00:00Z'), 'UTC', calendar)).toBe(false); // Saturday 09:00
    expect(withinSchedule(weekdayMornings, at('2026-11-20T18:00:00Z'), 'UTC', calendar)).toBe(false); // Friday 13:00
  });

  it('follows daylight saving time: 09:00 local is 07:00 UTC in summer and 08:00 UTC in winter', () => {
    const nineToTen = { timeZone: 'Europe/Berlin', windows: [{ start: '09:00', end: '10:00' }] };
    expect(withinSchedule(nineToTen, at('2026-07-01T07:30:00Z'), 'UTC', calendar)).toBe(true);
    expect(withinSchedule(nineToTen, at('2026-12-01T07:30:00Z'), 'UTC', calendar)).toBe(false);
    expect(withinSchedule(nineToTen, at('2026-12-01T08:30:00Z'), 'UTC', calendar)).toBe(true);
  });
});

describe('Schedule schema', () => {
  it('accepts a full schedule', () => {
    const parsed = Schedule.safeParse({ timeZone: 'Europe/Berlin', daysOfWeek: [1, 5], windows: [{ start: '00:00', end: '24:00' }] });
    expect(parsed.success).toBe(true);
  });

  it.each(['UTC', 'utc', 'Europe/Berlin', 'europe/berlin', 'US/Eastern', 'Etc/GMT+5', 'Asia/Calcutta'])('accepts the zone %s, as Intl takes it', (timeZone) => {
    expect(Schedule.safeParse({ timeZone }).success).toBe(true);
  });

  it.each([
    [{ timeZone: 'Mars/Olympus_Mons' }, 'timeZone'],
    [{ timeZone: '' }, 'timeZone'],
    [{ daysOfWeek: [] }, 'daysOfWeek'],
    [{ daysOfWeek: [1, 1] }, 'daysOfWeek'],
    [{ daysOfWeek: [7] }, 'daysOfWeek.0'],
    [{ windows: [] }, 'windows'],
    [{ windows: [{ start: '10:00', end: '09:00' }] }, 'windows.0.end'],
    [{ windows: [{ start: '10:00', end: '10:00' }] }, 'windows.0.end'],
    [{ windows: [{ start: '24:00', end: '24:00' }] }, 'windows.0.start'],
    [{ windows: [{ start: '9:00', end: '10:00' }] }, 'windows.0.start'],
    [{ windows: [{ start: '09:00', end: '24:30' }] }, 'windows.0.end'],
    [{ windows: Array.from({ length: 11 }, () => ({ start: '09:00', end: '10:00' })) }, 'windows'],
    [{ days: [1] }, ''],
  ])('refuses %j at %s', (schedule, path) => {
    const parsed = Schedule.safeParse(schedule);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join('.'))).toContain(path);
  });
});
