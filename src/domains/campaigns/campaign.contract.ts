// Campaign operations.
import { z } from 'zod';
import { ListQuery, listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { Campaign, CampaignListQuery, CreateCampaignBody, UpdateCampaignBody } from './campaign.schemas.js';

const tags = ['Campaigns'];
const params = z.object({ id: Uuid });

export const campaignContract = {
  createCampaign: defineOperation({
    name: 'campaigns.create',
    method: 'post',
    path: '/campaigns',
    scope: 'campaigns:write',
    summary: 'Create a campaign',
    description:
      'The `voucher` template is copied into each voucher created in the campaign, for the fields its creation leaves out. ' +
      '`validationRuleIds` must name rules of the workspace (400 naming the missing ones). A template whose amounts are ' +
      'money (an AMOUNT or FIXED discount, an `amountLimit`, a `maxDiscount`) needs a currency: the template\'s, the ' +
      "campaign's, or else the workspace's `defaultCurrency`, which its vouchers then take; with none, 400 `currency_required`.",
    tags,
    body: CreateCampaignBody,
    output: Campaign,
    successStatus: 201,
  }),
  listCampaigns: defineOperation({
    name: 'campaigns.list',
    method: 'get',
    path: '/campaigns',
    scope: 'campaigns:read',
    summary: 'List campaigns, newest first (of one type with `type`)',
    tags,
    query: CampaignListQuery,
    output: listEnvelope(Campaign, 'CampaignList'),
  }),
  getCampaign: defineOperation({
    name: 'campaigns.get',
    method: 'get',
    path: '/campaigns/{id}',
    scope: 'campaigns:read',
    summary: 'Get a campaign',
    description: "With a budget, `budgetUsage` tells what its current periods (in the workspace's time zone) used so far.",
    tags,
    params,
    output: Campaign,
  }),
  updateCampaign: defineOperation({
    name: 'campaigns.update',
    method: 'patch',
    path: '/campaigns/{id}',
    scope: 'campaigns:write',
    summary: 'Update a campaign',
    description:
      'Fields left out keep their value; `type` cannot change. Existing vouchers keep what they copied from the template. ' +
      'A new `budget` or `schedule` replaces the previous one whole; null removes it. Redemptions see the change at once. ' +
      'A change of `voucher` or `currency` that leaves a money template without a currency (and the workspace without a ' +
      '`defaultCurrency`) is 400 `currency_required`.',
    tags,
    params,
    body: UpdateCampaignBody,
    output: Campaign,
  }),
  deleteCampaign: defineOperation({
    name: 'campaigns.delete',
    method: 'delete',
    path: '/campaigns/{id}',
    scope: 'campaigns:write',
    summary: 'Delete a campaign and all its vouchers',
    tags,
    params,
  }),
};
