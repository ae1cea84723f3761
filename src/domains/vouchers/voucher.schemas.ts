// Voucher resources (discount vouchers, gift cards, loyalty cards): the voucher, its list, update and generation.
import { z } from 'zod';
import { Currency, ListQuery, Metadata, Money, Timestamp, Uuid, VoucherCode } from '../../contract/common.schemas.js';
import {
  CodeConfig,
  DATES_OUT_OF_ORDER,
  datesInOrder,
  PerCustomerLimit,
  Priority,
  RedemptionLimit,
  ValidationRuleIds,
  voucherSettings,
  VoucherType,
} from '../../contract/voucher-template.schemas.js';
import { Schedule } from '../../contract/schedule.schemas.js';
import { Discount } from '../../contract/discount.schemas.js';

export const Voucher = z
  .object({
    id: Uuid,
    code: VoucherCode,
    campaignId: Uuid.nullable(),
    type: VoucherType,
    discount: Discount.nullable(),
    gift: z
      .object({ amount: Money, balance: Money, currency: Currency })
      .optional()
      .meta({ description: 'Gift cards only: credits loaded and what is left.' }),
    currency: Currency.nullable(),
    active: z.boolean(),
    startDate: Timestamp.nullable(),
    expirationDate: Timestamp.nullable(),
    redemption: z.object({ limit: RedemptionLimit.nullable(), redeemedCount: z.number().int().min(0) }),
    perCustomerLimit: PerCustomerLimit.nullable(),
    priority: Priority.nullable(),
    exclusive: z.boolean().nullable(),
    maxDiscount: Money.nullable().meta({ description: 'At most this much off per redemption, in minor units.' }),
    customerId: Uuid.nullable().meta({ description: 'When set, only this customer may use the voucher.' }),
    validationRuleIds: ValidationRuleIds,
    schedule: Schedule.nullable().meta({ description: 'When in the week and day the voucher is valid; null: at any time.' }),
    metadata: Metadata,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Voucher' });
export type Voucher = z.infer<typeof Voucher>;

export const UpdateVoucherBody = z
  .object({
    ...voucherSettings,
    currency: Currency.meta({ description: 'For a voucher without a currency (made before money amounts required one); a currency once set does not change.' }),
  })
  .partial()
  .refine(datesInOrder, DATES_OUT_OF_ORDER);
export type UpdateVoucherBody = z.infer<typeof UpdateVoucherBody>;

export const VoucherListQuery = ListQuery.extend({ campaignId: Uuid.optional().meta({ description: 'Only this campaign’s vouchers.' }) });

export const VoucherCodeParams = z.object({ code: VoucherCode });

export const GenerateVouchersBody = z.object({
  count: z.number().int().min(1).max(100_000),
  codeConfig: CodeConfig.optional().meta({ description: 'Overrides the campaign template’s codeConfig field by field.' }),
});
export type GenerateVouchersBody = z.infer<typeof GenerateVouchersBody>;

export const GeneratedVouchers = z
  .object({ campaignId: Uuid, count: z.number().int(), codes: z.array(VoucherCode) })
  .meta({ id: 'GeneratedVouchers', description: 'The codes of the vouchers created, each with the campaign template applied.' });
export type GeneratedVouchers = z.infer<typeof GeneratedVouchers>;
