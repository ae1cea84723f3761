// Campaign handlers.
import { implement } from '../../contract/handler.js';
import { invalidField as invalid, problem } from '../../contract/problems.js';
import type { Sql } from '../../platform/database.js';
import { unknownValidationRules } from '../rules/index.js';
import { findWorkspace } from '../workspaces/index.js';
import { budgetPeriodKeys, budgetPeriods, budgetUsage } from './campaign-budget.rules.js';
import { campaignContract } from './campaign.contract.js';
import { deleteCampaign, findBudgetUsage, findCampaign, insertCampaign, listCampaigns, updateCampaign } from './campaign.queries.js';
import type { Campaign } from './campaign.schemas.js';

const notFound = () => problem('not_found', 'no such campaign');

/** The campaign with what its budget's current periods (in the workspace's time zone) used so far. */
async function withBudgetUsage(db: Sql, workspaceId: string, campaign: Campaign): Promise<Campaign> {
  if (!campaign.budget) return campaign;
  const workspace = await findWorkspace(db, workspaceId);
  const periods = budgetPeriods(Date.now(), workspace?.timeZone ?? 'UTC');
  const used = await findBudgetUsage(db, workspaceId, campaign.id, budgetPeriodKeys(campaign.budget, periods));
  return { ...campaign, budgetUsage: budgetUsage(campaign.budget, periods, used) };
}

export const campaignHandlers = implement(campaignContract, {
  async createCampaign({ input, auth, deps }) {
    const refusal = await unknownValidationRules(deps.db, auth.workspaceId, input.validationRuleIds);
    if (refusal) throw refusal;
    return insertCampaign(deps.db, auth.workspaceId, input);
  },
  async listCampaigns({ input, auth, deps }) {
    return listCampaigns(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async getCampaign({ input, auth, deps }) {
    const campaign = await findCampaign(deps.db, auth.workspaceId, input.id);
    if (!campaign) throw notFound();
    return withBudgetUsage(deps.db, auth.workspaceId, campaign);
  },
  async updateCampaign({ input, auth, deps }) {
    const { id, type, ...patch } = input;
    if (type !== undefined) {
      const current = await findCampaign(deps.db, auth.workspaceId, id);
      if (!current) throw notFound();
      if (current.type !== type) throw invalid('body.type', `the campaign type cannot change (it is ${current.type})`);
    }
    const refusal = await unknownValidationRules(deps.db, auth.workspaceId, patch.validationRuleIds);
    if (refusal) throw (await findCampaign(deps.db, auth.workspaceId, id)) ? refusal : notFound();
    const updated = await updateCampaign(deps.db, auth.workspaceId, id, patch);
    if (updated) {
      await deps.engine.campaignChanged(auth.workspaceId, id);
      return updated;
    }
    if (!(await findCampaign(deps.db, auth.workspaceId, id))) throw notFound();
    throw invalid('body.expirationDate', 'expirationDate is before startDate');
  },
  async deleteCampaign({ input, auth, deps }) {
    if (!(await deleteCampaign(deps.db, auth.workspaceId, input.id))) throw notFound();
    // Its vouchers went with it (foreign-key cascade): the partitions forget them.
    await deps.engine.campaignChanged(auth.workspaceId, input.id);
  },
});
