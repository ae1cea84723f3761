// What the engine knows of a voucher (or promotion tier) and its campaign when it decides: the shape every decision
// reads, loaded by the engine and handed to the pure rules in redemption.rules.ts.
import type { Budget } from './budget.schemas.js';
import type { ConditionTree } from './condition.schemas.js';
import type { ApplicableTo } from './condition.schemas.js';
import type { Schedule } from './schedule.schemas.js';
import type { Discount } from './discount.schemas.js';

/** A validation rule as a decision reads it. */
export interface RuleSnapshot {
  id: string;
  name: string;
  conditions: ConditionTree;
  errorMessage: string | null;
  applicableTo: ApplicableTo | null;
}

export interface CampaignSnapshot {
  id: string;
  active: boolean;
  startDate: number | null;
  expirationDate: number | null;
  currency: string | null;
  priority: number;
  exclusive: boolean;
  version: number;
  validationRuleIds: string[];
  schedule: Schedule | null;
  budget: Budget | null;
}

/** A loyalty card's balance in points; `value`: the program's payWithPoints.pointValue (`points` are worth `amount`). */
export interface CardPoints {
  balance: number;
  value: { points: number; amount: number } | null;
}

/**
 * A referral code as a decision reads it: its program's settings and its referrer, matched against the referee on id,
 * email (case-insensitive) and sourceId.
 */
export interface ReferralSnapshot {
  programId: string;
  referrerId: string;
  referrerEmail: string | null;
  referrerSourceId: string | null;
  refereeMustBeNew: boolean;
  confirmOn: 'REDEMPTION' | 'ORDER_PAID';
}

/** What the engine knows of a voucher (and its campaign) when it decides. Dates in epoch ms. */
export interface VoucherSnapshot {
  id: string;
  workspaceId: string;
  code: string;
  type: 'DISCOUNT' | 'GIFT_CARD' | 'LOYALTY_CARD';
  campaignId: string | null;
  discount: Discount | null;
  currency: string | null;
  active: boolean;
  startDate: number | null;
  expirationDate: number | null;
  redemptionLimit: number | null;
  redeemedCount: number;
  perCustomerLimit: number | null;
  priority: number | null;
  exclusive: boolean | null;
  maxDiscount: number | null;
  customerId: string | null;
  giftBalance: number | null;
  /** A loyalty card's points, and what they are worth at checkout (null: the program does not pay with points). */
  points: CardPoints | null;
  /** A referral code (a voucher of a REFERRAL_PROGRAM with a referrer); null otherwise. */
  referral: ReferralSnapshot | null;
  validationRuleIds: string[];
  configVersion: number;
  campaign: CampaignSnapshot | null;
  /** CODE: a voucher code; TIER: an automatic promotion tier (its code is `tier:<id>`). */
  kind: 'CODE' | 'TIER';
  name: string | null;
  schedule: Schedule | null;
  /** The workspace's time zone: schedules without their own zone, rule time fields and budget periods use it. */
  timeZone: string;
  /** The campaign's rules, then the voucher's, resolved (ids that no longer exist are left out). */
  rules: RuleSnapshot[];
}

