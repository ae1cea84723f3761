// The limits and usage of a budget's current periods (ZoneCalendar.budgetPeriods: 'day:2026-11-21', 'week:2026-11-16',
// 'month:2026-11'). Pure; shared with the redemption engine, which keys campaign_budget_usage rows alike.
import type { Budget, BudgetLimit, BudgetUsage } from '../../contract/budget.schemas.js';
import type { BudgetPeriods } from '../../contract/zone-calendar.js';

export type { BudgetPeriods } from '../../contract/zone-calendar.js';

export interface PeriodUse {
  redemptions: number;
  discountAmount: number;
}

export const TOTAL_PERIOD = 'total';

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
