// Insights handlers: resolve and bound the range (a 400 beyond it), then answer from the short cache or the queries.
import { implement } from '../../contract/handler.js';
import { invalidField } from '../../contract/problems.js';
import { TOTAL_PERIOD } from '../campaigns/campaign-budget.rules.js';
import type { ZoneCalendar } from '../../contract/zone-calendar.js';
import type { Budget, BudgetLimit } from '../../contract/budget.schemas.js';
import { insightContract } from './insight.contract.js';
import {
  findBudgetedCampaigns,
  findBudgetUsage,
  countLoyaltyMembers,
  sumLoyaltyPeriods,
  referralFigures,
  sumGiftBalances,
  topReferrers,
  sumRedemptionPeriods,
  sumReturnPeriods,
  sumRefusals,
  topCampaigns,
  webhookHealth,
  type BudgetedCampaignRow,
  type Range,
} from './insight.queries.js';
import { RANGE_LIMITS_DAYS } from './insight.schemas.js';

const DAY_MS = 86_400_000;
const DEFAULT_RANGE_DAYS = 30;

/** `to` defaults to now and `from` to 30 days before it; `from` must come first and the range fit in `maxDays`. */
export function resolveRange(input: { from?: string | undefined; to?: string | undefined }, maxDays: number, now: number): Range {
  const to = input.to !== undefined ? Date.parse(input.to) : now;
  const from = input.from !== undefined ? Date.parse(input.from) : to - DEFAULT_RANGE_DAYS * DAY_MS;
  if (!(from < to)) throw invalidField('query.from', 'from must be before to');
  if (to - from > maxDays * DAY_MS) throw invalidField('query.to', `the range may span at most ${maxDays} days here`);
  return { from: new Date(from), to: new Date(to) };
}

const nullIfEmpty = (currency: string | null) => (currency ? currency : null);
/** A sum of saturated figures, saturated again (signed ones too). */
const clampSafe = (n: number) => Math.max(-Number.MAX_SAFE_INTEGER, Math.min(n, Number.MAX_SAFE_INTEGER));

export const insightHandlers = implement(insightContract, {
  async redemptionInsights({ input, actor, deps }) {
    const range = resolveRange(input, RANGE_LIMITS_DAYS[input.interval], Date.now());
    return deps.insightCache.get(actor.workspaceId, 'redemptions', input, async () => {
      const [rows, returns] = await Promise.all([
        sumRedemptionPeriods(deps.db, actor.workspaceId, input.interval, range, input.campaignId),
        input.campaignId === undefined ? sumReturnPeriods(deps.db, actor.workspaceId, input.interval, range) : undefined,
      ]);
      return {
        data: rows.map((r) => ({
          period: r.period.toISOString(),
          currency: nullIfEmpty(r.currency),
          redemptions: r.redemptions,
          rollbacks: r.rollbacks,
          discountAmount: r.discount_amount,
          giftAmount: r.gift_amount,
          rolledBackAmount: Math.min(r.rolled_back_discount + r.rolled_back_gift, Number.MAX_SAFE_INTEGER),
          rolledBackDiscountAmount: r.rolled_back_discount,
          rolledBackGiftAmount: r.rolled_back_gift,
        })),
        ...(returns
          ? {
              returns: returns.map((r) => ({
                period: r.period.toISOString(),
                currency: nullIfEmpty(r.currency),
                returns: r.returns,
                returnedAmount: r.amount,
                returnedDiscountAmount: r.discount,
                returnedGiftAmount: r.gift_credits,
                returnedPointsPaid: r.points_paid,
                returnedPointsEarned: r.points_earned,
              })),
            }
          : {}),
      };
    });
  },

  async failureInsights({ input, actor, deps }) {
    const range = resolveRange(input, RANGE_LIMITS_DAYS.day, Date.now());
    return deps.insightCache.get(actor.workspaceId, 'failures', input, async () => {
      const rows = await sumRefusals(deps.db, actor.workspaceId, range, input.campaignId);
      const data = rows.map((r) => ({
        code: r.code,
        count: Math.min(r.redemptions + r.stacks, Number.MAX_SAFE_INTEGER),
        redemptions: r.redemptions,
        stacks: r.stacks,
        validations: r.validations,
      }));
      data.sort((a, b) => b.count - a.count || b.validations - a.validations || a.code.localeCompare(b.code));
      return { data };
    });
  },

  async campaignInsights({ input, actor, deps }) {
    const range = resolveRange(input, RANGE_LIMITS_DAYS.day, Date.now());
    return deps.insightCache.get(actor.workspaceId, 'campaigns', input, async () => {
      const rows = await topCampaigns(deps.db, actor.workspaceId, range, input.limit);
      return {
        data: rows.map((r) => ({
          campaignId: r.campaign_id,
          name: r.name,
          currency: nullIfEmpty(r.currency),
          redemptions: r.redemptions,
          discountAmount: r.discount_amount,
          giftAmount: r.gift_amount,
          rollbacks: r.rollbacks,
        })),
      };
    });
  },

  async budgetInsights({ input, actor, deps }) {
    return deps.insightCache.get(actor.workspaceId, 'budgets', input, async () => {
      const campaigns = await findBudgetedCampaigns(deps.db, actor.workspaceId);
      const now = Date.now();
      const planned = campaigns.map((c) => ({ campaign: c, limits: currentLimits(c, now, deps.calendar) }));
      const keys = [...new Set(planned.flatMap((p) => p.limits.map((l) => l.key)))];
      const usage = await findBudgetUsage(deps.db, actor.workspaceId, campaigns.map((c) => c.id), keys);
      const used = new Map(usage.map((u) => [`${u.campaign_id} ${u.period}`, { redemptions: u.redemptions, discountAmount: u.discount_amount }]));
      const data = planned.map(({ campaign, limits }) => ({
        campaignId: campaign.id,
        name: campaign.name,
        active: campaign.active,
        limits: limits.map((l) => {
          const u = used.get(`${campaign.id} ${l.key}`) ?? { redemptions: 0, discountAmount: 0 };
          return { ...l, used: u, burn: burnOf(l.limit, u) };
        }),
      }));
      const worst = (c: (typeof data)[number]) => Math.max(0, ...c.limits.map((l) => l.burn));
      data.sort((a, b) => worst(b) - worst(a) || a.name.localeCompare(b.name));
      return { data: data.slice(0, input.limit) };
    });
  },

  async giftCardInsights({ actor, deps }) {
    return deps.insightCache.get(actor.workspaceId, 'giftCards', {}, async () => {
      const rows = await sumGiftBalances(deps.db, actor.workspaceId);
      return { data: rows.map((r) => ({ currency: nullIfEmpty(r.currency), outstanding: r.outstanding, cards: r.cards, cardsWithBalance: r.with_balance })) };
    });
  },

  async loyaltyInsights({ input, actor, deps }) {
    const range = resolveRange(input, RANGE_LIMITS_DAYS[input.interval], Date.now());
    return deps.insightCache.get(actor.workspaceId, 'loyalty', input, async () => {
      const [periods, tiers] = await Promise.all([
        sumLoyaltyPeriods(deps.db, actor.workspaceId, input.programId, input.interval, range),
        countLoyaltyMembers(deps.db, actor.workspaceId, input.programId),
      ]);
      const total = <R,>(rows: R[], pick: (row: R) => number) => clampSafe(rows.reduce((a, r) => a + pick(r), 0));
      return {
        points: {
          earned: total(periods, (p) => p.earned),
          spent: total(periods, (p) => p.spent),
          refunded: total(periods, (p) => p.refunded),
          expired: total(periods, (p) => p.expired),
          reversed: total(periods, (p) => p.reversed),
          adjusted: total(periods, (p) => p.adjusted),
        },
        periods: periods.map((p) => ({
          period: p.period.toISOString(),
          earned: p.earned,
          spent: p.spent,
          refunded: p.refunded,
          expired: p.expired,
          reversed: p.reversed,
          adjusted: p.adjusted,
        })),
        pending: total(tiers, (t) => t.pending),
        outstanding: total(tiers, (t) => t.outstanding),
        members: total(tiers, (t) => t.members),
        tiers: tiers.map((t) => ({ tierId: t.tier_id, name: t.name, programId: t.program_id, minPoints: t.min_points, members: t.members })),
      };
    });
  },

  async referralInsights({ input, actor, deps }) {
    const range = resolveRange(input, RANGE_LIMITS_DAYS.day, Date.now());
    return deps.insightCache.get(actor.workspaceId, 'referrals', input, async () => {
      const [figures, top] = await Promise.all([
        referralFigures(deps.db, actor.workspaceId, range, input.programId),
        topReferrers(deps.db, actor.workspaceId, range, input.programId, input.limit),
      ]);
      return {
        conversions: { pending: figures.pending, confirmed: figures.confirmed, reverted: figures.reverted },
        rewards: { granted: figures.granted, failed: figures.failed, reverted: figures.rewards_reverted },
        topReferrers: top.map((r) => ({ customerId: r.customer_id, programId: r.program_id, code: r.code, confirmed: r.confirmed, pending: r.pending })),
      };
    });
  },

  async webhookInsights({ actor, deps }) {
    return deps.insightCache.get(actor.workspaceId, 'webhooks', {}, async () => {
      const health = await webhookHealth(deps.db, actor.workspaceId);
      const count = (status: string) => health.byStatus.find((s) => s.status === status)?.n ?? 0;
      const { attempts, succeeded } = health.attempts;
      return {
        deliveries: { pending: count('pending'), delivered: count('delivered'), retryScheduled: count('retry_scheduled'), dead: count('dead') },
        oldestPendingAt: health.oldest?.created_at ? health.oldest.created_at.toISOString() : null,
        oldestPendingAgeSeconds: health.oldest?.age !== undefined && health.oldest.age !== null ? Math.max(0, health.oldest.age) : null,
        last24h: { attempts, succeeded, successRate: attempts ? Math.round((succeeded / attempts) * 10_000) / 10_000 : null },
      };
    });
  },
});

type PeriodName = 'total' | 'daily' | 'weekly' | 'monthly';

/** Each limit of the campaign's budget in its current period, keyed as campaign_budget_usage keys it. */
function currentLimits(c: BudgetedCampaignRow, now: number, calendar: ZoneCalendar): Array<{ period: PeriodName; key: string; limit: BudgetLimit; resetsAt: string | null }> {
  const budget = c.budget as Budget;
  const periods = calendar.budgetPeriods(now, c.time_zone);
  const limits: Array<{ period: PeriodName; key: string; limit: BudgetLimit; resetsAt: string | null }> = [];
  if (budget.total) limits.push({ period: 'total', key: TOTAL_PERIOD, limit: budget.total, resetsAt: null });
  if (budget.daily) limits.push({ period: 'daily', key: periods.day, limit: budget.daily, resetsAt: c.day_ends.toISOString() });
  if (budget.weekly) limits.push({ period: 'weekly', key: periods.week, limit: budget.weekly, resetsAt: c.week_ends.toISOString() });
  if (budget.monthly) limits.push({ period: 'monthly', key: periods.month, limit: budget.monthly, resetsAt: c.month_ends.toISOString() });
  return limits;
}

/** The larger share used of the limit's figures (1 = exhausted), to 4 decimals. */
function burnOf(limit: BudgetLimit, used: { redemptions: number; discountAmount: number }): number {
  const shares = [
    limit.redemptions ? used.redemptions / limit.redemptions : 0,
    limit.discountAmount ? used.discountAmount / limit.discountAmount : 0,
  ];
  return Math.round(Math.max(...shares) * 10_000) / 10_000;
}
