// The fields a voucher is made of, shared by the voucher resource and a campaign's voucher template (and every
// domain that makes vouchers from one): types, limits, code config, gift credits, the template and the create body.
import { z } from 'zod';
import { CODE_CHARS, Currency, Metadata, Money, Timestamp, Uuid, VoucherCode } from './common.schemas.js';
import { Discount } from './discount.schemas.js';
import { Schedule } from './schedule.schemas.js';

export const VoucherType = z
  .enum(['DISCOUNT', 'GIFT_CARD', 'LOYALTY_CARD'])
  .meta({ id: 'VoucherType', description: 'DISCOUNT takes a Discount off an order; GIFT_CARD holds credits.' });
export type VoucherType = z.infer<typeof VoucherType>;

export const RedemptionLimit = z.number().int().min(0).max(2_147_483_647).meta({ description: 'Total uses allowed; null means unlimited.' });
export const PerCustomerLimit = z.number().int().min(1).max(2_147_483_647).meta({ description: 'Uses allowed per customer.' });
export const Priority = z
  .number()
  .int()
  .min(-1_000_000)
  .max(1_000_000)
  .meta({ description: 'Higher goes first in a stack; a voucher without one takes its campaign’s.' });
export const ValidationRuleIds = z.array(Uuid).max(50);

const CodeAffix = z.string().max(50).regex(/^[A-Za-z0-9_.-]*$/, 'only letters, digits, `_`, `.` and `-`');

export const CodeConfig = z
  .object({
    prefix: CodeAffix.optional(),
    postfix: CodeAffix.optional(),
    length: z.number().int().min(1).max(64).optional().meta({ description: 'Random characters per code (default 8); ignored with a pattern.' }),
    charset: z
      .string()
      .min(1)
      .max(100)
      .regex(CODE_CHARS, 'only letters, digits, `_`, `.` and `-`')
      .optional()
      .meta({
        description:
          'A preset (`alphanumeric`, `alphabetic`, `alphabetic_uppercase`, `alphabetic_lowercase`, `numbers`) or the literal ' +
          'characters to draw from. Default: upper-case letters and digits without look-alikes (no 0, O, 1, I).',
      }),
    pattern: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9_.-]*#[A-Za-z0-9_.#-]*$/, 'needs at least one `#`; other characters: letters, digits, `_`, `.`, `-`')
      .optional()
      .meta({ description: 'Each `#` becomes a random charset character, e.g. `SUMMER-####-####`; overrides length.' }),
  })
  .meta({ id: 'CodeConfig', description: 'How generated codes look: prefix + random part (length or pattern) + postfix.' });
export type CodeConfig = z.infer<typeof CodeConfig>;

export const GiftCredits = z
  .object({ amount: Money.meta({ description: 'Initial credits in minor units.' }), currency: Currency })
  .meta({ id: 'GiftCredits', description: 'The credits a new gift card starts with.' });
export type GiftCredits = z.infer<typeof GiftCredits>;

export function datesInOrder(value: { startDate?: string | null | undefined; expirationDate?: string | null | undefined }): boolean {
  return !value.startDate || !value.expirationDate || Date.parse(value.startDate) <= Date.parse(value.expirationDate);
}
export const DATES_OUT_OF_ORDER = { message: 'expirationDate is before startDate', path: ['expirationDate'] };

export const VoucherTemplate = z
  .object({
    type: VoucherType.optional(),
    discount: Discount.optional(),
    gift: GiftCredits.optional(),
    currency: Currency.optional(),
    redemptionLimit: RedemptionLimit.nullable().optional(),
    perCustomerLimit: PerCustomerLimit.nullable().optional(),
    priority: Priority.optional(),
    exclusive: z.boolean().optional(),
    maxDiscount: Money.optional(),
    startDate: Timestamp.optional(),
    expirationDate: Timestamp.optional(),
    metadata: Metadata.optional(),
    schedule: Schedule.optional(),
    codeConfig: CodeConfig.optional(),
  })
  .refine(datesInOrder, DATES_OUT_OF_ORDER)
  .refine((t) => !(t.type === 'DISCOUNT' && t.gift) && !(t.type === 'GIFT_CARD' && t.discount), {
    message: 'a DISCOUNT template has no gift and a GIFT_CARD template no discount',
    path: ['type'],
  })
  .refine((t) => !t.gift || !t.currency || t.gift.currency === t.currency, {
    message: 'currency differs from gift.currency',
    path: ['currency'],
  })
  .meta({ id: 'VoucherTemplate', description: "What a campaign's vouchers get when their creation leaves a field out." });
export type VoucherTemplate = z.infer<typeof VoucherTemplate>;

export const voucherSettings = {
  active: z.boolean(),
  startDate: Timestamp.nullable(),
  expirationDate: Timestamp.nullable(),
  redemptionLimit: RedemptionLimit.nullable(),
  perCustomerLimit: PerCustomerLimit.nullable(),
  priority: Priority.nullable(),
  exclusive: z.boolean().nullable(),
  maxDiscount: Money.nullable(),
  customerId: Uuid.nullable(),
  discount: Discount,
  validationRuleIds: ValidationRuleIds,
  schedule: Schedule.nullable(),
  metadata: Metadata,
};

export const CreateVoucherBody = z
  .object({
    ...voucherSettings,
    code: VoucherCode.meta({ description: 'Generated from the campaign’s codeConfig when left out.' }),
    campaignId: Uuid,
    type: VoucherType.meta({ description: 'Required without campaignId; else the template’s, else derived from the campaign type.' }),
    gift: GiftCredits,
    currency: Currency.meta({
      description:
        "Needed when the amounts are money (AMOUNT, FIXED, amountLimit, maxDiscount), unless the campaign names one; else the workspace's defaultCurrency is taken (400 currency_required without it).",
    }),
  })
  .partial()
  .refine(datesInOrder, DATES_OUT_OF_ORDER)
  .meta({ description: 'Fields left out are taken from the campaign’s voucher template; null clears an inherited value.' });
export type CreateVoucherBody = z.infer<typeof CreateVoucherBody>;
