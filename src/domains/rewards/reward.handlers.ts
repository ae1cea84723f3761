// Rewards catalog handlers: rewards checked against what their type needs, reward types, program offers, and reward
// redemptions (idempotent, refusals as outcomes); the engine learns of the vouchers a redemption made or changed.
import { implement, type ServiceDeps } from '../../contract/handler.js';
import { invalidField, problem, ProblemError } from '../../contract/problems.js';
import type { Sql } from '../../platform/database.js';
import { findCampaign } from '../campaigns/index.js';
import { findMember } from '../loyalty/index.js';
import { attributeErrors } from './reward-attributes.rules.js';
import { addRewardCodes } from './reward-issue.queries.js';
import { fulfilRewardRedemption, redeemReward, refundRewardRedemption, type Touched } from './reward-redemption.service.js';
import { rewardContract } from './reward.contract.js';
import {
  deleteOffer,
  deleteReward,
  deleteRewardType,
  findReward,
  findRewardRedemption,
  findRewardType,
  foreignTiers,
  insertReward,
  insertRewardType,
  listOffers,
  listRewards,
  listRewardTypes,
  publicRedemption,
  updateReward,
  upsertOffer,
} from './reward.queries.js';
import { priceFor, type CreateRewardBody } from './reward.schemas.js';

const rewardNotFound = () => problem('not_found', 'no such reward');

/** What each kind of reward needs: its campaign of the right type, an amount, a custom type and valid attributes. */
async function checkReward(tx: Sql, workspaceId: string, body: CreateRewardBody): Promise<void> {
  const needsCampaign = { DISCOUNT_VOUCHER: 'DISCOUNT_COUPONS', GIFT_CREDITS: 'GIFT_VOUCHERS', LOYALTY_POINTS: 'LOYALTY_PROGRAM' } as const;
  const campaignType = body.type in needsCampaign ? needsCampaign[body.type as keyof typeof needsCampaign] : undefined;
  if (campaignType) {
    if (!body.campaignId) throw invalidField('body.campaignId', `a ${body.type} reward needs a ${campaignType} campaign`);
    const campaign = await findCampaign(tx, workspaceId, body.campaignId);
    if (!campaign || campaign.type !== campaignType) throw invalidField('body.campaignId', `no ${campaignType} campaign with this id`);
  } else if (body.campaignId) throw invalidField('body.campaignId', `a ${body.type} reward has no campaign`);
  const needsAmount = body.type === 'GIFT_CREDITS' || body.type === 'LOYALTY_POINTS';
  if (needsAmount && body.amount === undefined) throw invalidField('body.amount', `a ${body.type} reward needs an amount`);
  if (!needsAmount && body.amount !== undefined) throw invalidField('body.amount', `a ${body.type} reward has no amount`);
  if (body.type === 'CUSTOM') {
    if (!body.rewardTypeId) throw invalidField('body.rewardTypeId', 'a CUSTOM reward needs a reward type');
    const type = await findRewardType(tx, workspaceId, body.rewardTypeId);
    if (!type) throw invalidField('body.rewardTypeId', 'no reward type with this id');
    const errors = attributeErrors(type.attributesSchema, body.attributes ?? {});
    if (errors.length) throw new ProblemError('invalid_request', 'the attributes do not fit the reward type', { errors });
  } else if (body.rewardTypeId) throw invalidField('body.rewardTypeId', 'only CUSTOM rewards have a reward type');
  if (body.startDate && body.expirationDate && Date.parse(body.expirationDate) < Date.parse(body.startDate)) {
    throw invalidField('body.expirationDate', 'expirationDate is before startDate');
  }
}

async function tellEngine(deps: ServiceDeps, workspaceId: string, touched: Touched): Promise<void> {
  for (const code of touched.codes) await deps.engine.voucherChanged(workspaceId, code);
}

export const rewardHandlers = implement(rewardContract, {
  async createReward({ input, actor, mutate }) {
    return mutate(async ({ tx, record }) => {
      await checkReward(tx, actor.workspaceId, input);
      const reward = await insertReward(tx, actor.workspaceId, input);
      record({ resourceType: 'reward', resourceId: reward.id, after: reward });
      return reward;
    });
  },
  async listRewards({ input, actor, deps }) {
    return listRewards(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async getReward({ input, actor, deps }) {
    const reward = await findReward(deps.db, actor.workspaceId, input.id);
    if (!reward) throw rewardNotFound();
    return reward;
  },
  async updateReward({ input, actor, mutate }) {
    const { id, ...patch } = input;
    return mutate(async ({ tx, record }) => {
      const before = await findReward(tx, actor.workspaceId, id, { lock: true });
      if (!before) throw rewardNotFound();
      if (patch.stock !== undefined && before.codePool) throw invalidField('body.stock', 'the stock of a reward with a code pool is the count of its codes left: add codes instead');
      if (patch.attributes !== undefined && before.rewardTypeId) {
        const type = (await findRewardType(tx, actor.workspaceId, before.rewardTypeId))!;
        const errors = attributeErrors(type.attributesSchema, patch.attributes);
        if (errors.length) throw new ProblemError('invalid_request', 'the attributes do not fit the reward type', { errors });
      }
      const after = (await updateReward(tx, actor.workspaceId, id, patch))!;
      if (after.startDate && after.expirationDate && Date.parse(after.expirationDate) < Date.parse(after.startDate)) {
        throw invalidField('body.expirationDate', 'expirationDate is before startDate');
      }
      record({ resourceType: 'reward', resourceId: id, before, after });
      return after;
    });
  },
  async deleteReward({ input, actor, mutate }) {
    await mutate(async ({ tx, record }) => {
      const before = await findReward(tx, actor.workspaceId, input.id, { lock: true });
      const result = await deleteReward(tx, actor.workspaceId, input.id);
      if (result === 'missing') throw rewardNotFound();
      if (result === 'in_use') throw problem('conflict', 'the reward has redemptions: deactivate it instead');
      record({ resourceType: 'reward', resourceId: input.id, before });
    });
  },
  async addRewardCodes({ input, actor, mutate }) {
    return mutate(async ({ tx, record }) => {
      // The reward's row lock: redemptions taking codes wait, so the stock stays the count of codes left.
      const before = await findReward(tx, actor.workspaceId, input.id, { lock: true });
      if (!before) throw rewardNotFound();
      if (before.type !== 'MATERIAL' && before.type !== 'CUSTOM') throw problem('conflict', `a ${before.type} reward issues its own ${before.type === 'LOYALTY_POINTS' ? 'points' : 'vouchers'}, not pool codes`);
      const { added, stock } = await addRewardCodes(tx, actor.workspaceId, input.id, input.codes);
      // The audit entry counts the codes, never lists them: they are worth something.
      record({ resourceType: 'reward', resourceId: input.id, before: { stock: before.stock, codePool: before.codePool }, after: { stock, codePool: true, codesAdded: added } });
      return { rewardId: input.id, added, skipped: input.codes.length - added, stock };
    });
  },
  async createRewardType({ input, actor, mutate }) {
    return mutate(async ({ tx, record }) => {
      const type = await insertRewardType(tx, actor.workspaceId, input);
      if (!type) throw problem('conflict', `a reward type with key ${JSON.stringify(input.key)} exists`);
      record({ resourceType: 'reward_type', resourceId: type.id, after: type });
      return type;
    });
  },
  async listRewardTypes({ input, actor, deps }) {
    return listRewardTypes(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async getRewardType({ input, actor, deps }) {
    const type = await findRewardType(deps.db, actor.workspaceId, input.id);
    if (!type) throw problem('not_found', 'no such reward type');
    return type;
  },
  async deleteRewardType({ input, actor, mutate }) {
    await mutate(async ({ tx, record }) => {
      const before = await findRewardType(tx, actor.workspaceId, input.id);
      const result = await deleteRewardType(tx, actor.workspaceId, input.id);
      if (result === 'missing') throw problem('not_found', 'no such reward type');
      if (result === 'in_use') throw problem('conflict', 'rewards use this type');
      record({ resourceType: 'reward_type', resourceId: input.id, before });
    });
  },
  async offerReward({ input, actor, mutate }) {
    return mutate(async ({ tx, record }) => {
      const program = await findCampaign(tx, actor.workspaceId, input.id);
      if (!program || program.type !== 'LOYALTY_PROGRAM') throw problem('not_found', 'no such loyalty program');
      if (!(await findReward(tx, actor.workspaceId, input.rewardId))) throw invalidField('body.rewardId', 'no reward with this id');
      const foreign = new Set(await foreignTiers(tx, actor.workspaceId, input.id, input.tierPrices.map((p) => p.tierId)));
      const index = input.tierPrices.findIndex((p) => foreign.has(p.tierId));
      if (index >= 0) throw invalidField(`body.tierPrices.${index}.tierId`, 'not a tier of this program');
      const offer = await upsertOffer(tx, actor.workspaceId, input.id, input);
      record({ resourceType: 'loyalty_program_reward', resourceId: offer.id, after: { programId: offer.programId, rewardId: offer.rewardId, points: offer.points, tierPrices: offer.tierPrices } });
      return offer;
    });
  },
  async listProgramRewards({ input, actor, deps }) {
    const { id, ...page } = input;
    const program = await findCampaign(deps.db, actor.workspaceId, id);
    if (!program || program.type !== 'LOYALTY_PROGRAM') throw problem('not_found', 'no such loyalty program');
    return listOffers(deps.db, deps.cursors, actor.workspaceId, id, page);
  },
  async withdrawReward({ input, actor, mutate }) {
    await mutate(async ({ tx, record }) => {
      if (!(await deleteOffer(tx, actor.workspaceId, input.id, input.rewardId))) throw problem('not_found', 'the program does not offer this reward');
      record({ resourceType: 'loyalty_program_reward', resourceId: input.rewardId, before: { programId: input.id, rewardId: input.rewardId } });
    });
  },
  async listMemberRewards({ input, actor, deps }) {
    const { id, ...page } = input;
    const member = await findMember(deps.db, actor.workspaceId, id);
    if (!member) throw problem('not_found', 'no such loyalty member');
    const offers = await listOffers(deps.db, deps.cursors, actor.workspaceId, member.programId, page);
    const balance = Math.max(0, member.balance);
    return {
      ...offers,
      data: offers.data.map((o) => {
        const price = priceFor(o, member.tier?.id);
        return { ...o, price, affordable: balance >= price, pointsMissing: Math.max(0, price - balance) };
      }),
    };
  },
  async redeemReward(ctx) {
    const { id, rewardId } = ctx.input;
    const touched: Touched = { codes: [] };
    // Redemptions of one reward take turns in this process (ServiceDeps.rowTurns) before its row lock, the first the
    // unit of work takes: members racing for a scarce reward wait here, not each on a pool connection.
    const outcome = await ctx.deps.rowTurns.run(`reward:${rewardId.toLowerCase()}`, () =>
      ctx.mutate((unit) => redeemReward(unit, ctx.actor.workspaceId, id, rewardId, touched)),
    );
    await tellEngine(ctx.deps, ctx.actor.workspaceId, touched);
    return outcome as never;
  },
  async getRewardRedemption({ input, actor, deps }) {
    const stored = await findRewardRedemption(deps.db, actor.workspaceId, input.id);
    if (!stored) throw problem('not_found', 'no such reward redemption');
    return publicRedemption(stored);
  },
  async refundRewardRedemption(ctx) {
    const touched: Touched = { codes: [] };
    const outcome = await ctx.mutate((unit) => refundRewardRedemption(unit, ctx.actor.workspaceId, ctx.input.id, 'REFUNDED', touched));
    await tellEngine(ctx.deps, ctx.actor.workspaceId, touched);
    return outcome as never;
  },
  async fulfilRewardRedemption(ctx) {
    const touched: Touched = { codes: [] };
    const outcome = await ctx.mutate((unit) => fulfilRewardRedemption(unit, ctx.actor.workspaceId, ctx.input.id, ctx.input.status, touched));
    await tellEngine(ctx.deps, ctx.actor.workspaceId, touched);
    return outcome as never;
  },
});
