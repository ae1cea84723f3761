// Budget periods of an instant in a time zone ('day:2026-11-21', 'week:2026-11-16', 'month:2026-11') and the usage
// of a budget's current periods. Pure; shared with the redemption engine, which keys campaign_budget_usage rows alike.
import type { Budget, BudgetLimit, BudgetUsage } from '../../contract/budget.schemas.js';

export interface BudgetPeriods {
  day: string;
  week: string;
  month: string;
}

export interface PeriodUse {
  redemptions: number;
  discountAmount: number;
}

export const TOTAL_PERIOD = 'total';

const MAX_CACHED_ZONES = 1_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    // Throws RangeError for an unknown zone (before anything is cached).
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, calendar: 'gregory', numberingSystem: 'latn', year: 'numeric', month: 'numeric', day: 'numeric' });
    if (formatters.size >= MAX_CACHED_ZONES) formatters.clear();
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');
const isoDate = (year: number, month: number, day: number) => `${pad(year, 4)}-${pad(month)}-${pad(day)}`;

const lastPeriods = new Map<string, { minute: number; periods: BudgetPeriods }>();

/**
 * The keys of the day, ISO week (named by its Monday) and month that contain `nowMs` in `timeZone`. They cannot
 * change within one UTC minute (zone offsets are whole minutes), so the last answer per zone is kept: a redemption
 * asks several times, and formatting is the expensive part.
 */
export function budgetPeriods(nowMs: number, timeZone: string): BudgetPeriods {
  const minute = Math.floor(nowMs / 60_000);
  const last = lastPeriods.get(timeZone);
  if (last && last.minute === minute) return last.periods;
  const periods = computePeriods(nowMs, timeZone);
  if (lastPeriods.size >= MAX_CACHED_ZONES) lastPeriods.clear();
  lastPeriods.set(timeZone, { minute, periods });
  return periods;
}

function computePeriods(nowMs: number, timeZone: string): BudgetPeriods {
  let year = 0;
  let month = 0;
  let day = 0;
  for (const part of formatterFor(timeZone).formatToParts(nowMs)) {
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

/** Each period a budget limits now, keyed as in campaign_budget_usage, with its limit. */
export function budgetLimits(budget: Budget, periods: BudgetPeriods): Array<{ period: string; limit: BudgetLimit }> {
  const limits: Array<{ period: string; limit: BudgetLimit }> = [];
  if (budget.total) limits.push({ period: TOTAL_PERIOD, limit: budget.total });
  if (budget.daily) limits.push({ period: periods.day, limit: budget.daily });
  if (budget.weekly) limits.push({ period: periods.week, limit: budget.weekly });
  if (budget.monthly) limits.push({ period: periods.month, limit: budget.monthly });
  return limits;
}

/** The period keys whose usage a budget reads now: only those of the limits it has. */
export function budgetPeriodKeys(budget: Budget, periods: BudgetPeriods): string[] {
  return budgetLimits(budget, periods).map((l) => l.period);
}

/** The usage of each limited period; a period without a row has used nothing. */
export function budgetUsage(budget: Budget, periods: BudgetPeriods, used: ReadonlyMap<string, PeriodUse>): BudgetUsage {
  const of = (key: string): PeriodUse => used.get(key) ?? { redemptions: 0, discountAmount: 0 };
  const usage: BudgetUsage = {};
  if (budget.total) usage.total = of(TOTAL_PERIOD);
  if (budget.daily) usage.daily = { period: periods.day, ...of(periods.day) };
  if (budget.weekly) usage.weekly = { period: periods.week, ...of(periods.week) };
  if (budget.monthly) usage.monthly = { period: periods.month, ...of(periods.month) };
  return usage;
}
