// The `loyalty` settings of a LOYALTY_PROGRAM campaign: joining, pending and expiring points, paying with points and
// what a canceled order's reversal may do to a balance.
import { z } from 'zod';
import { Timestamp } from '../../contract/common.schemas.js';

const Days = z.number().int().min(1).max(36_500);
const Points = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const LoyaltyExpiration = z
  .object({
    type: z.enum(['NONE', 'ROLLING', 'FIXED_DATE']),
    days: Days.optional().meta({ description: 'ROLLING: earned points expire this many days after they are granted.' }),
    date: Timestamp.optional().meta({ description: 'FIXED_DATE: every grant expires at this instant.' }),
    notifyDaysBefore: z
      .number()
      .int()
      .min(0)
      .max(365)
      .default(7)
      .meta({ description: '`loyalty.points.expiring` is sent once per bucket this many days before it expires (default 7; 0: never).' }),
  })
  .superRefine((e, ctx) => {
    if (e.type === 'ROLLING' && e.days === undefined) ctx.addIssue({ code: 'custom', message: 'ROLLING expiration needs days', path: ['days'] });
    if (e.type === 'FIXED_DATE' && e.date === undefined) ctx.addIssue({ code: 'custom', message: 'FIXED_DATE expiration needs date', path: ['date'] });
    if (e.type !== 'ROLLING' && e.days !== undefined) ctx.addIssue({ code: 'custom', message: 'days is for ROLLING expiration', path: ['days'] });
    if (e.type !== 'FIXED_DATE' && e.date !== undefined) ctx.addIssue({ code: 'custom', message: 'date is for FIXED_DATE expiration', path: ['date'] });
  })
  .meta({ id: 'LoyaltyExpiration', description: 'When earned points leave the balance.' });
export type LoyaltyExpiration = z.infer<typeof LoyaltyExpiration>;

export const LoyaltySettings = z
  .object({
    autoJoin: z.boolean().default(true).meta({ description: 'A customer earning by a rule of the program becomes a member.' }),
    pending: z
      .object({ days: Days })
      .optional()
      .meta({ description: 'Points earned by rules are pending this many days before they count in the balance.' }),
    expiration: LoyaltyExpiration.optional(),
    payWithPoints: z
      .object({ pointValue: z.object({ points: Points, amount: Points.meta({ description: 'Minor units the points are worth.' }) }) })
      .optional()
      .meta({ description: "The member's code pays like a gift card: `floor(balance × amount / points)`." }),
    reversal: z
      .object({ earned: z.enum(['TO_ZERO', 'ALLOW_NEGATIVE']) })
      .optional()
      .meta({
        description:
          'A canceled order takes its earned points back; what was spent of them is taken from the balance, down to 0 ' +
          '(TO_ZERO, the default) or below (ALLOW_NEGATIVE: spending is refused until the balance is positive again).',
      }),
  })
  .meta({ id: 'LoyaltySettings', description: 'The settings of a LOYALTY_PROGRAM campaign.' });
export type LoyaltySettings = z.infer<typeof LoyaltySettings>;
