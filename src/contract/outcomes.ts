// The explanation codes of every business outcome: one closed list, each code with its support-safe message. The
// ExplanationCode enum (engine, handlers, OpenAPI) and the messages both come from it, so neither can lack a code.
import { z } from 'zod';

const EXPLANATION_MESSAGES = {
  voucher_not_found: 'No voucher with this code exists.',
  campaign_inactive: 'The campaign of this voucher is not active now.',
  voucher_disabled: 'This voucher is disabled.',
  voucher_expired: 'This voucher has expired.',
  voucher_not_started: 'This voucher is not valid yet.',
  redemption_limit_reached: 'This voucher has been used as many times as allowed.',
  per_user_redemption_limit_reached: 'This customer has used this voucher as many times as allowed.',
  customer_required: 'This voucher needs a customer.',
  customer_not_found: 'No customer with this id exists.',
  currency_mismatch: 'The order currency differs from the voucher currency.',
  gift_balance_zero: 'The gift card has no balance left.',
  order_required: 'An order is needed to use this voucher.',
  validation_rule_failed: 'A validation rule of this voucher does not hold for this order.',
  voucher_assigned_to_other_customer: 'This voucher belongs to another customer.',
  gift_balance_insufficient: 'The gift card balance is below the amount asked.',
  voucher_type_not_redeemable: 'Vouchers of this type are not redeemed here.',
  exclusive_conflict: 'An exclusive voucher cannot be combined with others.',
  stack_limit_exceeded: 'Too many vouchers in one stack.',
  duplicate_voucher: 'The same voucher appears twice in the stack.',
  skipped: 'Not applied because another voucher of the stack failed.',
  redemption_already_rolled_back: 'This redemption has been rolled back already.',
  outside_schedule: 'This promotion is not valid at this time.',
  campaign_budget_exhausted: 'The budget of this campaign is used up for now.',
  promotion_tier_not_found: 'No promotion tier with this id exists.',
  loyalty_points_insufficient: 'The loyalty balance is below the points asked.',
  loyalty_member_inactive: 'This loyalty card is disabled.',
  loyalty_pay_with_points_disabled: 'This loyalty program does not pay with points.',
  referral_self_use: 'A referrer cannot use their own referral code.',
  referee_not_new: 'Referral codes are for new customers only.',
  referee_already_referred: 'This customer has been referred in this program already.',
  referrer_limit_reached: 'This referral code has been used as many times as allowed.',
  reward_not_found: 'No such reward is offered in this program.',
  reward_inactive: 'This reward is not available now.',
  reward_out_of_stock: 'This reward is out of stock.',
  reward_limit_reached: 'This member has redeemed this reward as many times as allowed.',
  reward_already_used: 'What this reward issued has been used already.',
} as const;

export type ExplanationCode = keyof typeof EXPLANATION_MESSAGES;

/** Every business-decision code, in the order of the list; a new code is one line above, with its message. */
export const EXPLANATION_CODES = Object.keys(EXPLANATION_MESSAGES) as [ExplanationCode, ...ExplanationCode[]];

export const ExplanationCode = z.enum(EXPLANATION_CODES).meta({ id: 'ExplanationCode', description: 'Why a voucher cannot be used: support-safe and stable.' });

export function explanationMessage(code: ExplanationCode): string {
  return EXPLANATION_MESSAGES[code];
}
