// Campaign handlers: each write is one unit of work (the change, its audit entry and its event commit together); the
// engine hears of a change after its commit.
import { implement } from '../../contract/handler.js';
import { invalidField as invalid, problem, ProblemError } from '../../contract/problems.js';
import type { Sql } from '../../platform/database.js';
import type { ZoneCalendar } from '../../contract/zone-calendar.js';
import { unknownValidationRules } from '../rules/index.js';
import { templateCurrencyProblem } from '../../checkout/voucher-template.rules.js';
import { findDefaultCurrency, findWorkspace } from '../workspaces/index.js';
import { budgetPeriodKeys, budgetUsage } from './campaign-budget.rules.js';
import { campaignContract } from './campaign.contract.js';
import { deleteCampaign, findBudgetUsage, findCampaign, insertCampaign, listCampaigns, lockCampaign, updateCampaign } from './campaign.queries.js';
import type { Campaign } from './campaign.schemas.js';
import { LoyaltySettings } from './loyalty-settings.schemas.js';

const notFound = () => problem('not_found', 'no such campaign');

/** A template whose amounts are money is refused only when neither it, the campaign nor the workspace names a currency. */
async function requireTemplateCurrency(tx: Sql, workspaceId: string, campaign: Pick<Campaign, 'currency' | 'voucher'>): Promise<void> {
  if (!campaign.voucher) return;
  const refusal = templateCurrencyProblem(campaign, await findDefaultCurrency(tx, workspaceId));
  if (refusal) throw new ProblemError('currency_required', refusal.message, { errors: [refusal] });
}

/** The campaign with what its budget's current periods (in the workspace's time zone) used so far. */
async function withBudgetUsage(db: Sql, calendar: ZoneCalendar, workspaceId: string, campaign: Campaign): Promise<Campaign> {
  if (!campaign.budget) return campaign;
  const workspace = await findWorkspace(db, workspaceId);
  const periods = calendar.budgetPeriods(Date.now(), workspace?.timeZone ?? 'UTC');
  const used = await findBudgetUsage(db, workspaceId, campaign.id, budgetPeriodKeys(campaign.budget, periods));
  return { ...campaign, budgetUsage: budgetUsage(campaign.budget, periods, used) };
}

export const campaignHandlers = implement(campaignContract, {
  async createCampaign({ input, actor, mutate }) {
    return mutate(async ({ tx, record, emit }) => {
      const refusal = await unknownValidationRules(tx, actor.workspaceId, input.validationRuleIds);
      if (refusal) throw refusal;
      await requireTemplateCurrency(tx, actor.workspaceId, { currency: input.currency ?? null, voucher: input.voucher ?? null });
      // A loyalty program always has its settings, with their defaults when none were given (a referral program's
      // are required by the body's schema).
      const body = input.type === 'LOYALTY_PROGRAM' ? { ...input, loyalty: input.loyalty ?? LoyaltySettings.parse({}) } : input;
      const campaign = await insertCampaign(tx, actor.workspaceId, body);
      record({ resourceType: 'campaign', resourceId: campaign.id, after: campaign });
      emit('campaign.created', { campaignId: campaign.id, campaign });
      return campaign;
    });
  },
  async listCampaigns({ input, actor, deps }) {
    return listCampaigns(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async getCampaign({ input, actor, deps }) {
    const campaign = await findCampaign(deps.db, actor.workspaceId, input.id);
    if (!campaign) throw notFound();
    return withBudgetUsage(deps.db, deps.calendar, actor.workspaceId, campaign);
  },
  async updateCampaign({ input, actor, deps, mutate }) {
    const { id, type, ...patch } = input;
    const updated = await mutate(async ({ tx, record, emit }) => {
      const before = await lockCampaign(tx, actor.workspaceId, id);
      if (!before) throw notFound();
      if (type !== undefined && before.type !== type) throw invalid('body.type', `the campaign type cannot change (it is ${before.type})`);
      if (patch.loyalty !== undefined && before.type !== 'LOYALTY_PROGRAM') throw invalid('body.loyalty', 'loyalty settings are for LOYALTY_PROGRAM campaigns');
      if (patch.referral !== undefined && before.type !== 'REFERRAL_PROGRAM') throw invalid('body.referral', 'referral settings are for REFERRAL_PROGRAM campaigns');
      const refusal = await unknownValidationRules(tx, actor.workspaceId, patch.validationRuleIds);
      if (refusal) throw refusal;
      // Only a patch that touches the template or the currency is checked: a rename never fails on an older template.
      if (patch.voucher !== undefined || patch.currency !== undefined) {
        await requireTemplateCurrency(tx, actor.workspaceId, {
          currency: patch.currency !== undefined ? patch.currency : before.currency,
          voucher: patch.voucher !== undefined ? patch.voucher : before.voucher,
        });
      }
      // The row is locked, so the update refuses only for its date guard.
      const after = await updateCampaign(tx, actor.workspaceId, id, patch);
      if (!after) throw invalid('body.expirationDate', 'expirationDate is before startDate');
      record({ resourceType: 'campaign', resourceId: id, before, after });
      emit('campaign.updated', { campaignId: id, campaign: after });
      return after;
    });
    await deps.engine.campaignChanged(actor.workspaceId, id);
    return updated;
  },
  async deleteCampaign({ input, actor, deps, mutate }) {
    await mutate(async ({ tx, record, emit }) => {
      const before = await deleteCampaign(tx, actor.workspaceId, input.id);
      if (!before) throw notFound();
      record({ resourceType: 'campaign', resourceId: input.id, before });
      emit('campaign.deleted', { campaignId: input.id });
    });
    // Its vouchers went with it (foreign-key cascade): the partitions forget them.
    await deps.engine.campaignChanged(actor.workspaceId, input.id);
  },
});
