// Business outcomes: the one ExplanationCode enum shared by the engine, the handlers and the OpenAPI document.
import { z } from 'zod';

export const ExplanationCode = z
  .enum([
    'voucher_not_found',
    'campaign_inactive',
    'voucher_disabled',
    'voucher_expired',
    'voucher_not_started',
    'redemption_limit_reached',
    'per_user_redemption_limit_reached',
    'customer_required',
    'currency_mismatch',
    'gift_balance_zero',
    'order_required',
    'validation_rule_failed',
    'voucher_assigned_to_other_customer',
    'gift_balance_insufficient',
    'exclusive_conflict',
    'stack_limit_exceeded',
    'duplicate_voucher',
    'skipped',
    'redemption_already_rolled_back',
  ])
  .meta({ id: 'ExplanationCode', description: 'Why a voucher was refused; support-safe and machine-readable.' });
export type ExplanationCode = z.infer<typeof ExplanationCode>;

export const Explanation = z
  .looseObject({ code: ExplanationCode, message: z.string().optional() })
  .meta({ id: 'Explanation', description: 'One reason behind an outcome, with details that depend on the code.' });
export type Explanation = z.infer<typeof Explanation>;
