// A campaign's budget (limits per period on redemptions and amounts redeemed) and what its current periods used.
import { z } from 'zod';

const Count = z.number().int().min(1).max(2_147_483_647);
const Amount = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const BudgetLimit = z
  .object({
    redemptions: Count.optional().meta({ description: 'At most this many redemptions in the period.' }),
    discountAmount: Amount.optional().meta({
      description: 'At most this much redeemed in the period, in minor units: discounts, or credits for gift cards.',
    }),
  })
  .refine((limit) => limit.redemptions !== undefined || limit.discountAmount !== undefined, {
    message: 'a budget limit needs redemptions or discountAmount',
  })
  .meta({ id: 'BudgetLimit', description: 'Limits of one budget period; at least one of the two.' });
export type BudgetLimit = z.infer<typeof BudgetLimit>;

export const Budget = z
  .object({
    total: BudgetLimit.optional().meta({ description: 'Over the whole life of the campaign.' }),
    daily: BudgetLimit.optional().meta({ description: "Per calendar day in the workspace's time zone." }),
    weekly: BudgetLimit.optional().meta({ description: "Per ISO week (Monday to Sunday) in the workspace's time zone." }),
    monthly: BudgetLimit.optional().meta({ description: "Per calendar month in the workspace's time zone." }),
  })
  .refine((b) => b.total !== undefined || b.daily !== undefined || b.weekly !== undefined || b.monthly !== undefined, {
    message: 'a budget needs at least one of total, daily, weekly, monthly',
  })
  .meta({
    id: 'CampaignBudget',
    description:
      "What the campaign's vouchers may redeem together, in total and per period (calendar day, ISO week starting " +
      "Monday, calendar month, in the workspace's time zone). A redemption that would exceed a limit is refused.",
  });
export type Budget = z.infer<typeof Budget>;

const Used = {
  redemptions: z.number().int().min(0).meta({ description: 'Redemptions counted in the period.' }),
  discountAmount: z.number().int().min(0).meta({ description: 'Amount redeemed in the period, in minor units.' }),
};
const PeriodUsed = (example: string) =>
  z.object({ period: z.string().meta({ description: 'The period key.', example }), ...Used });

export const BudgetUsage = z
  .object({
    total: z.object(Used).optional(),
    daily: PeriodUsed('day:2026-11-21').optional(),
    weekly: PeriodUsed('week:2026-11-16').optional().meta({ description: 'The key names the Monday of the week.' }),
    monthly: PeriodUsed('month:2026-11').optional(),
  })
  .meta({ id: 'CampaignBudgetUsage', description: 'What the current periods of each budgeted limit used so far.' });
export type BudgetUsage = z.infer<typeof BudgetUsage>;
