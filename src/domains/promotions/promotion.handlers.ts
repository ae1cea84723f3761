// Promotion handlers: tiers are voucher rows of kind TIER, so their decisions go to the redemption engine by their
// internal code; each change tells the engine, which reloads the tier before its next decision.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { idempotencyClaim, refusal, refusalFields, resolveCustomer } from '../redemptions/index.js';
import { unknownValidationRules } from '../rules/index.js';
import { promotionContract } from './promotion.contract.js';
import { qualificationIndex, qualify } from './qualification.service.js';
import { deleteTier, findCampaignType, findTier, insertTier, listTiers, updateTier } from './tier.queries.js';
import { tierCode } from './tier.rules.js';

const notFound = () => problem('not_found', 'no such promotion tier');

async function assertRulesExist(db: Parameters<typeof unknownValidationRules>[0], workspaceId: string, ids: readonly string[] | undefined) {
  const unknown = await unknownValidationRules(db, workspaceId, ids);
  if (unknown) throw unknown;
}

export const promotionHandlers = implement(promotionContract, {
  async createTier({ input, auth, deps }) {
    const { id, ...body } = input;
    const type = await findCampaignType(deps.db, auth.workspaceId, id);
    if (!type) throw problem('not_found', 'no such campaign');
    if (type !== 'PROMOTION') throw problem('conflict', `tiers belong to PROMOTION campaigns; this one is ${type}`);
    await assertRulesExist(deps.db, auth.workspaceId, body.validationRuleIds);
    const tier = await insertTier(deps.db, auth.workspaceId, id, body);
    await deps.engine.voucherChanged(auth.workspaceId, tierCode(tier.id));
    return tier;
  },
  async listTiers({ input, auth, deps }) {
    if (!(await findCampaignType(deps.db, auth.workspaceId, input.id))) throw problem('not_found', 'no such campaign');
    return listTiers(deps.db, deps.cursors, auth.workspaceId, input.id, input);
  },
  async getTier({ input, auth, deps }) {
    const tier = await findTier(deps.db, auth.workspaceId, input.id);
    if (!tier) throw notFound();
    return tier;
  },
  async updateTier({ input, auth, deps }) {
    const { id, ...patch } = input;
    await assertRulesExist(deps.db, auth.workspaceId, patch.validationRuleIds);
    const tier = await updateTier(deps.db, auth.workspaceId, id, patch);
    if (!tier) throw notFound();
    await deps.engine.voucherChanged(auth.workspaceId, tierCode(id));
    return tier;
  },
  async deleteTier({ input, auth, deps }) {
    if (!(await deleteTier(deps.db, auth.workspaceId, input.id))) throw notFound();
    await deps.engine.voucherChanged(auth.workspaceId, tierCode(input.id));
  },
  async validatePromotions({ input, auth, deps }) {
    // The customer and the index (one read of the workspace's version) are fetched at the same time.
    const [customer, index] = await Promise.all([
      resolveCustomer(deps.db, auth.workspaceId, input.customer, false),
      qualificationIndex(deps.db, deps.engine, auth.workspaceId),
    ]);
    if (!customer) throw problem('not_found', 'no such customer');
    const promotions = await qualify(deps.db, deps.engine, { workspaceId: auth.workspaceId, index, order: input.order, customer, scope: 'AUTOMATIC', limit: 100 });
    return { promotions };
  },
  async redeemTier({ input, auth, deps }) {
    const { id, ...body } = input;
    const customer = await resolveCustomer(deps.db, auth.workspaceId, input.customer, true);
    if (!customer) return { ok: false, ...refusalFields(refusal('customer_not_found')) };
    const outcome = await deps.engine.redeem({
      workspaceId: auth.workspaceId,
      code: tierCode(id),
      kind: 'TIER',
      order: input.order,
      customer,
      metadata: input.metadata,
      idempotency: idempotencyClaim('promotions.redeemTier', id, body),
    });
    if (!outcome.ok && outcome.code === 'voucher_not_found') return { ...outcome, ...refusalFields(refusal('promotion_tier_not_found')) };
    return outcome;
  },
  async qualify({ input, auth, deps }) {
    const [customer, index] = await Promise.all([
      resolveCustomer(deps.db, auth.workspaceId, input.customer, false),
      input.scope === 'CUSTOMER_VOUCHERS' ? undefined : qualificationIndex(deps.db, deps.engine, auth.workspaceId),
    ]);
    if (!customer) throw problem('not_found', 'no such customer');
    const data = await qualify(deps.db, deps.engine, { workspaceId: auth.workspaceId, index, order: input.order, customer, scope: input.scope, limit: input.limit });
    return { data };
  },
});
