// Promotion handlers: tiers are voucher rows of kind TIER, so their decisions go to the redemption engine by their
// internal code; each change is one unit of work, and tells the engine after its commit, which reloads the tier
// before its next decision.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { refusal, refusalFields } from '../../checkout/redemption.rules.js';
import { unknownValidationRules } from '../rules/index.js';
import { promotionContract } from './promotion.contract.js';
import { qualificationInputs, qualify } from './qualification.service.js';
import { bestDealOf } from './best-deal.service.js';
import { deleteTier, findCampaignType, findTier, insertTier, listTiers, updateTier } from './tier.queries.js';
import { tierCode } from './tier.rules.js';

const RESOURCE = 'promotion_tier';
const notFound = () => problem('not_found', 'no such promotion tier');

async function assertRulesExist(db: Parameters<typeof unknownValidationRules>[0], workspaceId: string, ids: readonly string[] | undefined) {
  const unknown = await unknownValidationRules(db, workspaceId, ids);
  if (unknown) throw unknown;
}

export const promotionHandlers = implement(promotionContract, {
  async createTier({ input, actor, deps, mutate }) {
    const { id, ...body } = input;
    const tier = await mutate(async ({ tx, record }) => {
      const type = await findCampaignType(tx, actor.workspaceId, id);
      if (!type) throw problem('not_found', 'no such campaign');
      if (type !== 'PROMOTION') throw problem('conflict', `tiers belong to PROMOTION campaigns; this one is ${type}`);
      await assertRulesExist(tx, actor.workspaceId, body.validationRuleIds);
      const created = await insertTier(tx, actor.workspaceId, id, body);
      record({ resourceType: RESOURCE, resourceId: created.id, after: created });
      return created;
    });
    await deps.engine.voucherChanged(actor.workspaceId, tierCode(tier.id));
    return tier;
  },
  async listTiers({ input, actor, deps }) {
    if (!(await findCampaignType(deps.db, actor.workspaceId, input.id))) throw problem('not_found', 'no such campaign');
    return listTiers(deps.db, deps.cursors, actor.workspaceId, input.id, input);
  },
  async getTier({ input, actor, deps }) {
    const tier = await findTier(deps.db, actor.workspaceId, input.id);
    if (!tier) throw notFound();
    return tier;
  },
  async updateTier({ input, actor, deps, mutate }) {
    const { id, ...patch } = input;
    const tier = await mutate(async ({ tx, record }) => {
      await assertRulesExist(tx, actor.workspaceId, patch.validationRuleIds);
      const before = await findTier(tx, actor.workspaceId, id, { forUpdate: true });
      if (!before) throw notFound();
      const updated = await updateTier(tx, actor.workspaceId, id, patch);
      if (!updated) throw notFound();
      record({ resourceType: RESOURCE, resourceId: id, before, after: updated });
      return updated;
    });
    await deps.engine.voucherChanged(actor.workspaceId, tierCode(id));
    return tier;
  },
  async deleteTier({ input, actor, deps, mutate }) {
    await mutate(async ({ tx, record }) => {
      const before = await deleteTier(tx, actor.workspaceId, input.id);
      if (!before) throw notFound();
      record({ resourceType: RESOURCE, resourceId: input.id, before });
    });
    await deps.engine.voucherChanged(actor.workspaceId, tierCode(input.id));
  },
  async validatePromotions({ input, actor, deps }) {
    const scope = 'AUTOMATIC';
    const { customer, index, customerCodes } = await qualificationInputs(deps.db, deps.tierIndexes, actor.workspaceId, input.customer, scope);
    if (!customer) throw problem('not_found', 'no such customer');
    const promotions = await qualify(deps.engine, deps.calendar, { workspaceId: actor.workspaceId, index, order: input.order, customer, scope, limit: 100, customerCodes });
    return { promotions };
  },
  async redeemTier({ input, actor, deps, idempotency }) {
    const { id } = input;
    const customer = await deps.customers.redeemingOne(actor.workspaceId, input.customer);
    if (!customer) return { ok: false as const, ...refusalFields(refusal('customer_not_found')) };
    const outcome = await deps.engine.redeem({
      workspaceId: actor.workspaceId,
      code: tierCode(id),
      kind: 'TIER',
      order: input.order,
      customer,
      metadata: input.metadata,
      idempotency,
    });
    if (!outcome.ok && outcome.code === 'voucher_not_found') return { ...outcome, ...refusalFields(refusal('promotion_tier_not_found')) };
    return outcome;
  },
  async qualify({ input, actor, deps }) {
    const { customer, index, customerCodes } = await qualificationInputs(deps.db, deps.tierIndexes, actor.workspaceId, input.customer, input.scope);
    if (!customer) throw problem('not_found', 'no such customer');
    const { scope, limit, codes } = input;
    const data = await qualify(deps.engine, deps.calendar, { workspaceId: actor.workspaceId, index, order: input.order, customer, scope, limit, customerCodes, codes });
    if (!input.bestDeal) return { data };
    return { data, bestDeal: await bestDealOf(deps, { workspaceId: actor.workspaceId, offers: data, order: input.order, customer }) };
  },
});
