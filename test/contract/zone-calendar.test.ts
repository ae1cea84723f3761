// The time-zone calendar: the start of the local hour for insight rollups, and the last answers it keeps per zone
// (schedules and budget periods are covered in test/rules/condition.rules.test.ts and test/campaigns/).
import { describe, expect, it } from 'vitest';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';

const at = (iso: string) => Date.parse(iso);

describe('ZoneCalendar.rollupHour', () => {
  it('starts the hour at the local hour: :00 in whole-hour zones, :30 and :45 in the others', () => {
    const calendar = new ZoneCalendar();
    expect(calendar.rollupHour(at('2026-11-21T10:20:00Z'), 'Europe/Berlin')).toBe(at('2026-11-21T10:00:00Z'));
    expect(calendar.rollupHour(at('2026-11-21T10:20:00Z'), 'Asia/Kolkata')).toBe(at('2026-11-21T09:30:00Z'));
    expect(calendar.rollupHour(at('2026-11-21T10:40:00Z'), 'Asia/Kolkata')).toBe(at('2026-11-21T10:30:00Z'));
    expect(calendar.rollupHour(at('2026-11-21T10:20:00Z'), 'Asia/Kathmandu')).toBe(at('2026-11-21T10:15:00Z'));
  });

  it('counts in UTC hours for a zone Intl does not know', () => {
    expect(new ZoneCalendar().rollupHour(at('2026-11-21T10:20:00Z'), 'Mars/Olympus_Mons')).toBe(at('2026-11-21T10:00:00Z'));
  });
});

describe('ZoneCalendar memos', () => {
  it('answers again from the last answer within the UTC minute, and reads anew in the next', () => {
    const calendar = new ZoneCalendar();
    const first = calendar.budgetPeriods(at('2026-11-21T23:59:10Z'), 'UTC');
    expect(calendar.budgetPeriods(at('2026-11-21T23:59:50Z'), 'UTC')).toBe(first);
    expect(calendar.budgetPeriods(at('2026-11-22T00:00:00Z'), 'UTC').day).toBe('day:2026-11-22');
    const facts = calendar.timeFacts(at('2026-11-21T10:00:05Z'), 'Europe/Berlin');
    expect(calendar.timeFacts(at('2026-11-21T10:00:55Z'), 'Europe/Berlin')).toBe(facts);
    expect(calendar.timeFacts(at('2026-11-21T10:01:00Z'), 'Europe/Berlin').minute).toBe(1);
  });

  it('keeps each instance to itself: two calendars answer alike from their own memos', () => {
    const one = new ZoneCalendar();
    const other = new ZoneCalendar();
    const now = at('2026-11-21T10:00:00Z');
    expect(other.timeFacts(now, 'Asia/Tokyo')).toEqual(one.timeFacts(now, 'Asia/Tokyo'));
    expect(other.timeFacts(now, 'Asia/Tokyo')).not.toBe(one.timeFacts(now, 'Asia/Tokyo'));
  });

  it('answers right after more than a thousand zones were asked in one minute (the memo starts again)', () => {
    const calendar = new ZoneCalendar();
    const now = at('2026-11-21T10:00:00Z');
    expect(calendar.rollupHour(now, 'Asia/Kolkata')).toBe(at('2026-11-21T09:30:00Z'));
    for (let i = 0; i < 2_500; i++) expect(calendar.rollupHour(now, `Mars/Crater_${i}`)).toBe(now);
    expect(calendar.rollupHour(now, 'Asia/Kolkata')).toBe(at('2026-11-21T09:30:00Z'));
  });
});
