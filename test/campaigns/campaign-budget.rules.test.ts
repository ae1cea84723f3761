import { describe, expect, it } from 'vitest';
import { budgetPeriodKeys, budgetUsage } from '../../src/domains/campaigns/campaign-budget.rules.js';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';

const at = (iso: string) => Date.parse(iso);
const calendar = new ZoneCalendar();

describe('budgetPeriods', () => {
  it('names the day, the Monday of the ISO week and the month in UTC', () => {
    expect(calendar.budgetPeriods(at('2026-11-21T10:00:00Z'), 'UTC')).toEqual({ day: 'day:2026-11-21', week: 'week:2026-11-16', month: 'month:2026-11' });
  });

  it('counts a Monday as the first day of its own week and a Sunday as the last', () => {
    expect(calendar.budgetPeriods(at('2026-11-16T00:00:00Z'), 'UTC').week).toBe('week:2026-11-16');
    expect(calendar.budgetPeriods(at('2026-11-22T23:59:59.999Z'), 'UTC').week).toBe('week:2026-11-16');
    expect(calendar.budgetPeriods(at('2026-11-23T00:00:00Z'), 'UTC').week).toBe('week:2026-11-23');
  });

  it('uses the local date east of UTC, where the day starts earlier', () => {
    // 23:30 UTC on Sunday 2026-11-22 is already Monday 2026-11-23 in Tokyo (UTC+9).
    expect(calendar.budgetPeriods(at('2026-11-22T23:30:00Z'), 'Asia/Tokyo')).toEqual({
      day: 'day:2026-11-23',
      week: 'week:2026-11-23',
      month: 'month:2026-11',
    });
    expect(calendar.budgetPeriods(at('2026-11-22T23:30:00Z'), 'UTC').week).toBe('week:2026-11-16');
  });

  it('uses the local date west of UTC, where the month ends later', () => {
    // 03:00 UTC on 2026-12-01 is still 2026-11-30 in New York (UTC-5).
    expect(calendar.budgetPeriods(at('2026-12-01T03:00:00Z'), 'America/New_York')).toEqual({
      day: 'day:2026-11-30',
      week: 'week:2026-11-30',
      month: 'month:2026-11',
    });
    expect(calendar.budgetPeriods(at('2026-12-01T03:00:00Z'), 'UTC').month).toBe('month:2026-12');
  });

  it('names a week crossing a month boundary by its Monday in the previous month', () => {
    // Sunday 2026-03-01: its week began on Monday 2026-02-23.
    expect(calendar.budgetPeriods(at('2026-03-01T12:00:00Z'), 'Europe/Berlin')).toEqual({
      day: 'day:2026-03-01',
      week: 'week:2026-02-23',
      month: 'month:2026-03',
    });
  });

  it('names a week crossing a year boundary by its Monday in the previous year', () => {
    // Friday 2027-01-01 belongs to the week of Monday 2026-12-28.
    expect(calendar.budgetPeriods(at('2027-01-01T08:00:00Z'), 'UTC')).toEqual({ day: 'day:2027-01-01', week: 'week:2026-12-28', month: 'month:2027-01' });
    // In Kiritimati (UTC+14) the new year has begun while UTC is still at 2026-12-31 11:00.
    expect(calendar.budgetPeriods(at('2026-12-31T11:00:00Z'), 'Pacific/Kiritimati')).toEqual({
      day: 'day:2027-01-01',
      week: 'week:2026-12-28',
      month: 'month:2027-01',
    });
    // And in Honolulu (UTC-10) the old year lasts until 10:00 UTC on 2027-01-01.
    expect(calendar.budgetPeriods(at('2027-01-01T09:59:00Z'), 'Pacific/Honolulu')).toEqual({
      day: 'day:2026-12-31',
      week: 'week:2026-12-28',
      month: 'month:2026-12',
    });
  });

  it('follows daylight saving time: the local midnight moves with the offset', () => {
    // Berlin is UTC+2 in summer: 22:30 UTC on 2026-07-31 is 00:30 on 2026-08-01.
    expect(calendar.budgetPeriods(at('2026-07-31T22:30:00Z'), 'Europe/Berlin').month).toBe('month:2026-08');
    // In winter (UTC+1) 22:30 UTC on 2026-01-31 is 23:30 the same day.
    expect(calendar.budgetPeriods(at('2026-01-31T22:30:00Z'), 'Europe/Berlin').month).toBe('month:2026-01');
  });

  it('gives the same answer on repeated calls (the formatter is cached per zone)', () => {
    const first = calendar.budgetPeriods(at('2026-11-21T10:00:00Z'), 'Asia/Kolkata');
    expect(calendar.budgetPeriods(at('2026-11-21T10:00:00Z'), 'Asia/Kolkata')).toEqual(first);
    expect(calendar.budgetPeriods(at('2026-11-21T20:00:00Z'), 'Asia/Kolkata').day).toBe('day:2026-11-22');
  });

  it('throws a RangeError for an unknown time zone', () => {
    expect(() => calendar.budgetPeriods(0, 'Mars/Olympus_Mons')).toThrow(RangeError);
  });
});

describe('budgetUsage', () => {
  const periods = { day: 'day:2026-11-21', week: 'week:2026-11-16', month: 'month:2026-11' };

  it('reads only the periods the budget limits', () => {
    expect(budgetPeriodKeys({ total: { redemptions: 10 }, weekly: { discountAmount: 500 } }, periods)).toEqual(['total', 'week:2026-11-16']);
  });

  it('reports each limited period, zero where nothing was used yet', () => {
    const used = new Map([['day:2026-11-21', { redemptions: 3, discountAmount: 1200 }]]);
    expect(budgetUsage({ total: { redemptions: 100 }, daily: { redemptions: 5 } }, periods, used)).toEqual({
      total: { redemptions: 0, discountAmount: 0 },
      daily: { period: 'day:2026-11-21', redemptions: 3, discountAmount: 1200 },
    });
  });
});
