// Automatic promotions: tiers of PROMOTION campaigns, their validation and redemption, and qualification.
import { z } from 'zod';
import { listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { RedemptionOutcome } from '../../contract/checkout.schemas.js';
import {
  CheckoutBody,
  CreateTierBody,
  PromotionsValidation,
  PromotionTier,
  Qualification,
  QualificationBody,
  RedeemTierBody,
  TierListQuery,
  UpdateTierBody,
} from './tier.schemas.js';

const tags = ['Promotions'];
const idParams = z.object({ id: Uuid });
const OUTCOME_NOTE = 'Always 200 for a well-formed request: ineligibility is an outcome with a `code`, never an HTTP error.';

export const promotionContract = {
  createTier: defineOperation({
    name: 'promotions.createTier',
    method: 'post',
    path: '/campaigns/{id}/tiers',
    scope: 'campaigns:write',
    summary: 'Add an automatic promotion tier to a PROMOTION campaign',
    description:
      'A tier applies without a code when its rules, schedule, limits and its campaign allow it. The campaign must be of ' +
      'type PROMOTION (409 otherwise); `validationRuleIds` must name rules of the workspace (400 naming the missing ones).',
    tags,
    params: idParams,
    body: CreateTierBody,
    output: PromotionTier,
    successStatus: 201,
  }),
  listTiers: defineOperation({
    name: 'promotions.listTiers',
    method: 'get',
    path: '/campaigns/{id}/tiers',
    scope: 'campaigns:read',
    summary: "List a campaign's promotion tiers, newest first",
    tags,
    params: idParams,
    query: TierListQuery,
    output: listEnvelope(PromotionTier, 'PromotionTierList'),
  }),
  getTier: defineOperation({
    name: 'promotions.getTier',
    method: 'get',
    path: '/promotions/tiers/{id}',
    scope: 'campaigns:read',
    summary: 'Get a promotion tier',
    tags,
    params: idParams,
    output: PromotionTier,
  }),
  updateTier: defineOperation({
    name: 'promotions.updateTier',
    method: 'patch',
    path: '/promotions/tiers/{id}',
    scope: 'campaigns:write',
    summary: 'Update a promotion tier',
    description: 'Fields left out are kept; `null` clears. Takes effect on the very next decision.',
    tags,
    params: idParams,
    body: UpdateTierBody,
    output: PromotionTier,
  }),
  deleteTier: defineOperation({
    name: 'promotions.deleteTier',
    method: 'delete',
    path: '/promotions/tiers/{id}',
    scope: 'campaigns:write',
    summary: 'Delete a promotion tier (its redemptions stay)',
    tags,
    params: idParams,
    successStatus: 204,
  }),
  validatePromotions: defineOperation({
    name: 'promotions.validate',
    effect: 'read', hot: true,
    method: 'post',
    path: '/promotions/validate',
    scope: 'vouchers:read',
    summary: 'The automatic promotion tiers that apply to a cart, with their discounts (commits nothing)',
    description: 'Each tier is judged alone against the whole cart; best deal first; tiers that would give 0 are left out.',
    tags,
    body: CheckoutBody,
    output: PromotionsValidation,
  }),
  redeemTier: defineOperation({
    name: 'promotions.redeemTier',
    effect: 'redemption', hot: true,
    method: 'post',
    path: '/promotions/tiers/{id}/redemption',
    scope: 'redemptions:write',
    summary: 'Redeem an automatic promotion tier for an order',
    description:
      `The same outcome and idempotency as a voucher redemption; the redemption carries \`tierId\` and emits ` +
      `\`promotion_tier.redeemed\`. An unknown tier is the outcome \`promotion_tier_not_found\`. ${OUTCOME_NOTE}`,
    tags,
    params: idParams,
    body: RedeemTierBody,
    output: RedemptionOutcome,
    idempotent: true,
  }),
  qualify: defineOperation({
    name: 'qualifications.check',
    effect: 'read', hot: true,
    method: 'post',
    path: '/qualifications',
    scope: 'vouchers:read',
    summary: 'What a customer can use for this cart right now, best deal first',
    description:
      'Promotion tiers (AUTOMATIC), vouchers and gift cards assigned or published to the customer (CUSTOMER_VOUCHERS), ' +
      'or both (ALL), each with what it would give alone. Nothing is committed. Tiers are found through an index of what ' +
      'excludes them cheaply (currency, products, minimum amount), then decided in full and confirmed against live counts.',
    tags,
    body: QualificationBody,
    output: Qualification,
  }),
};
