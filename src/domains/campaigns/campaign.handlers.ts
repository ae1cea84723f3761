// Campaign handlers.
import { implement } from '../../contract/handler.js';
import { invalidField as invalid, problem } from '../../contract/problems.js';
import { campaignContract } from './campaign.contract.js';
import { deleteCampaign, findCampaign, insertCampaign, listCampaigns, updateCampaign } from './campaign.queries.js';

const notFound = () => problem('not_found', 'no such campaign');

export const campaignHandlers = implement(campaignContract, {
  async createCampaign({ input, auth, deps }) {
    return insertCampaign(deps.db, auth.workspaceId, input);
  },
  async listCampaigns({ input, auth, deps }) {
    return listCampaigns(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async getCampaign({ input, auth, deps }) {
    const campaign = await findCampaign(deps.db, auth.workspaceId, input.id);
    if (!campaign) throw notFound();
    return campaign;
  },
  async updateCampaign({ input, auth, deps }) {
    const { id, type, ...patch } = input;
    if (type !== undefined) {
      const current = await findCampaign(deps.db, auth.workspaceId, id);
      if (!current) throw notFound();
      if (current.type !== type) throw invalid('body.type', `the campaign type cannot change (it is ${current.type})`);
    }
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
