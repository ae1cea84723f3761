// Campaign resources: a campaign groups vouchers and holds the template its vouchers inherit from.
import { z } from 'zod';
import { Currency, ListQuery, Metadata, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { Schedule } from '../../contract/schedule.schemas.js';
import { DATES_OUT_OF_ORDER, datesInOrder, Priority, ValidationRuleIds, VoucherTemplate } from '../../contract/voucher-template.schemas.js';
import { Budget, BudgetUsage } from '../../contract/budget.schemas.js';
import { LoyaltySettings } from './loyalty-settings.schemas.js';
import { ReferralSettings, ReferralSettingsBody } from './referral-settings.schemas.js';

export const CampaignType = z
  .enum(['DISCOUNT_COUPONS', 'GIFT_VOUCHERS', 'LOYALTY_PROGRAM', 'REFERRAL_PROGRAM', 'PROMOTION'])
  .meta({ id: 'CampaignType' });
export type CampaignType = z.infer<typeof CampaignType>;

export const Campaign = z
  .object({
    id: Uuid,
    name: z.string().trim().min(1).max(200),
    type: CampaignType,
    active: z.boolean(),
    startDate: Timestamp.nullable(),
    expirationDate: Timestamp.nullable(),
    priority: Priority,
    exclusive: z.boolean().meta({ description: 'An exclusive voucher cannot be stacked with others.' }),
    currency: Currency.nullable(),
    voucher: VoucherTemplate.nullable(),
    validationRuleIds: ValidationRuleIds,
    schedule: Schedule.nullable().meta({ description: 'When in the week and day the campaign is valid; null: at any time.' }),
    budget: Budget.nullable(),
    oncePerCustomer: z.boolean().meta({ description: 'Publications give a customer at most one code of this campaign.' }),
    loyalty: LoyaltySettings.optional().meta({ description: 'LOYALTY_PROGRAM campaigns only: the program settings (defaults filled in).' }),
    referral: ReferralSettings.optional().meta({ description: 'REFERRAL_PROGRAM campaigns only: the program settings (defaults filled in).' }),
    metadata: Metadata,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    budgetUsage: BudgetUsage.optional().meta({
      description: 'In campaigns.get only, when the campaign has a budget: what its current periods used so far.',
    }),
  })
  .meta({ id: 'Campaign' });
export type Campaign = z.infer<typeof Campaign>;

const settings = Campaign.pick({
  name: true,
  active: true,
  startDate: true,
  expirationDate: true,
  priority: true,
  exclusive: true,
  currency: true,
  voucher: true,
  validationRuleIds: true,
  schedule: true,
  budget: true,
  oncePerCustomer: true,
  loyalty: true,
  referral: true,
  metadata: true,
});

export const CreateCampaignBody = settings
  .partial()
  .extend({
    name: Campaign.shape.name,
    type: CampaignType,
    active: z.boolean().default(true),
    priority: Priority.default(0),
    exclusive: z.boolean().default(false),
    validationRuleIds: ValidationRuleIds.default([]),
    oncePerCustomer: Campaign.shape.oncePerCustomer.default(false),
    referral: ReferralSettingsBody.optional().meta({ description: 'REFERRAL_PROGRAM campaigns only, and required there (with `referrerRewards`).' }),
    metadata: Metadata.default({}),
  })
  .refine(datesInOrder, DATES_OUT_OF_ORDER)
  .refine((c) => c.loyalty === undefined || c.type === 'LOYALTY_PROGRAM', { message: 'loyalty settings are for LOYALTY_PROGRAM campaigns', path: ['loyalty'] })
  .refine((c) => c.referral === undefined || c.type === 'REFERRAL_PROGRAM', { message: 'referral settings are for REFERRAL_PROGRAM campaigns', path: ['referral'] })
  .refine((c) => c.referral !== undefined || c.type !== 'REFERRAL_PROGRAM', {
    message: 'a REFERRAL_PROGRAM needs its referral settings, with referrerRewards',
    path: ['referral', 'referrerRewards'],
  });
export type CreateCampaignBody = z.infer<typeof CreateCampaignBody>;

export const UpdateCampaignBody = settings
  .partial()
  .extend({
    type: CampaignType.optional().meta({ description: 'Immutable: accepted only when it equals the current type.' }),
    referral: ReferralSettingsBody.optional().meta({ description: 'Replaces the referral settings as a whole, so it names referrerRewards again.' }),
  })
  .refine(datesInOrder, DATES_OUT_OF_ORDER);
export type UpdateCampaignBody = z.infer<typeof UpdateCampaignBody>;

export const CampaignListQuery = ListQuery.extend({ type: CampaignType.optional().meta({ description: 'Only campaigns of this type.' }) });
