// Redeeming a reward for points, and taking it back. One transaction each: the reward's stock (its row locked, a
// guarded decrement), the member's card (locked; the points debited FIFO by expiry through loyalty_debit), and what
// is issued to the member's customer commit together or not at all. Racing members queue on the reward row, racing
// spends of one member on the card row, so neither stock nor points can be overspent. Lock order, everywhere: the
// redemption row, the reward row, then voucher rows in id order (as the engine's batches lock them).
import { refuse as refuseWrite, type UnitOfWork } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { uuidv7 } from '../../platform/ids.js';
import type { Sql } from '../../platform/database.js';
import { findCampaign, type Campaign } from '../campaigns/index.js';
import { debitPoints, findMember, findMemberId, grantPoints, joinProgram, lockCards, placeMember, refundPoints } from '../loyalty/index.js';
import { messageOf } from '../../checkout/redemption.rules.js';
import { codeSpecProblem, generateCode, insertGiftCredits, insertVoucher, resolveCodeSpec } from '../vouchers/index.js';
import { applyVoucherTemplate } from '../../checkout/voucher-template.rules.js';
import { findDefaultCurrency } from '../workspaces/index.js';
import {
  claimRewardCode,
  creditGiftCard,
  debitGiftCard,
  disableUnusedVoucher,
  findCustomerGiftCard,
  lockVoucherRows,
  voidRewardCode,
} from './reward-issue.queries.js';
import {
  countMemberRedemptions,
  findOffer,
  findReward,
  findRewardType,
  giveBackStock,
  insertRewardRedemption,
  lockRewardRedemption,
  publicRedemption,
  setRewardRedemptionStatus,
  takeStock,
  type IssuedRecord,
  type StoredRewardRedemption,
} from './reward.queries.js';
import { priceFor, type Reward, type RewardRedemptionOutcome } from './reward.schemas.js';

const CODE_DRAWS = 10;
/** Codes of issued vouchers when the campaign names no codeConfig: RW- and 10 random characters. */
const REWARD_CODE = { prefix: 'RW-', length: 10 };

const refuse = (code: Parameters<typeof messageOf>[0], details?: Record<string, unknown>): never => refuseWrite(code, messageOf(code), details);

/** Codes of vouchers created or changed: the engine learns of them after the commit. */
export interface Touched {
  codes: string[];
}

/** The reward's availability now: active, inside its window. */
function available(reward: Reward, now = Date.now()): boolean {
  if (!reward.active) return false;
  if (reward.startDate && Date.parse(reward.startDate) > now) return false;
  return !(reward.expirationDate && Date.parse(reward.expirationDate) < now);
}

/** A new voucher of the reward's campaign for the customer, its code drawn from the campaign's codeConfig. */
async function makeVoucher(unit: Pick<UnitOfWork, 'tx' | 'emit'>, workspaceId: string, campaign: Campaign, settings: Parameters<typeof applyVoucherTemplate>[0]) {
  const fields = applyVoucherTemplate(settings, campaign, { defaultCurrency: await findDefaultCurrency(unit.tx, workspaceId), path: 'reward.campaign.voucher' });
  if (!fields.ok) throw problem('conflict', `the reward's campaign cannot make a voucher: ${fields.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
  const spec = resolveCodeSpec(campaign.voucher?.codeConfig ?? REWARD_CODE);
  const refusal = codeSpecProblem(spec, 1);
  if (refusal) throw problem('conflict', `the reward's campaign cannot make a code: ${refusal}`);
  for (let draw = 0; draw < CODE_DRAWS; draw++) {
    // ON CONFLICT DO NOTHING: a taken code leaves the transaction usable for the next draw.
    const voucher = await insertVoucher(unit.tx, workspaceId, campaign.id, generateCode(spec), fields.fields);
    if (!voucher) continue;
    if (fields.fields.giftAmount !== null) await insertGiftCredits(unit.tx, workspaceId, voucher.id, fields.fields.giftAmount, fields.fields.giftAmount);
    unit.emit('voucher.created', { voucherId: voucher.id, code: voucher.code, voucher });
    return voucher;
  }
  throw problem('conflict', "no free code found with the reward's campaign codeConfig; widen it");
}

async function requireCampaign(tx: Sql, workspaceId: string, campaignId: string): Promise<Campaign> {
  const campaign = await findCampaign(tx, workspaceId, campaignId);
  if (!campaign) throw problem('conflict', "the reward's campaign no longer exists");
  return campaign;
}

/** The existing vouchers that issuing the reward to the customer changes: lock them with the member's card, in id order. */
async function issueTargets(tx: Sql, workspaceId: string, reward: Reward, customerId: string): Promise<string[]> {
  if (reward.type === 'GIFT_CREDITS') return [await findCustomerGiftCard(tx, workspaceId, reward.campaignId!, customerId)].filter((id) => id !== undefined);
  if (reward.type === 'LOYALTY_POINTS') return [await findMemberId(tx, workspaceId, reward.campaignId!, customerId)].filter((id) => id !== undefined);
  return [];
}

/**
 * What the reward issues to the customer, in the caller's transaction. GIFT_CREDITS go onto the customer's gift card
 * of the campaign (made if missing) by a relative, guarded SQL update: a partition deciding on the card meanwhile
 * keeps its own guarded update, and forgets the card after the commit (the caller tells the engine).
 */
export async function issue(unit: Pick<UnitOfWork, 'tx' | 'emit'>, workspaceId: string, reward: Reward, customerId: string, redemptionId: string, touched: Touched): Promise<IssuedRecord | null> {
  const { tx } = unit;
  switch (reward.type) {
    case 'DISCOUNT_VOUCHER': {
      const voucher = await makeVoucher(unit, workspaceId, await requireCampaign(tx, workspaceId, reward.campaignId!), { customerId });
      touched.codes.push(voucher.code);
      return { voucherId: voucher.id, voucherCode: voucher.code };
    }
    case 'GIFT_CREDITS': {
      const amount = reward.amount!;
      const cardId = await findCustomerGiftCard(tx, workspaceId, reward.campaignId!, customerId);
      if (cardId) {
        const credited = await creditGiftCard(tx, workspaceId, cardId, amount);
        if (!credited) throw problem('conflict', 'the gift card balance would pass 2^53-1');
        touched.codes.push(credited.code);
        return { voucherId: cardId, voucherCode: credited.code, amount };
      }
      const campaign = await requireCampaign(tx, workspaceId, reward.campaignId!);
      const card = await makeVoucher(unit, workspaceId, campaign, { type: 'GIFT_CARD', customerId, gift: { amount, currency: campaign.currency ?? 'EUR' } });
      touched.codes.push(card.code);
      return { voucherId: card.id, voucherCode: card.code, amount };
    }
    case 'LOYALTY_POINTS': {
      const { member } = await joinProgram(unit, workspaceId, { programId: reward.campaignId!, customerId }, 'reuse');
      const granted = await grantPoints(tx, workspaceId, member.id, { points: reward.amount!, type: 'ADJUSTMENT', source: { type: 'reward_redemption', id: redemptionId }, reason: reward.name });
      await placeMember(unit, workspaceId, member.id);
      unit.emit('loyalty.points.adjusted', { memberId: member.id, points: reward.amount!, entryId: granted.entryId, balance: granted.balanceAfter, reason: 'reward' });
      return { memberId: member.id, points: reward.amount!, entryId: granted.entryId };
    }
    case 'MATERIAL':
    case 'CUSTOM': {
      if (!reward.codePool) return null;
      // The stock was taken under the reward's lock and equals the codes left: a code is there.
      const claimed = await claimRewardCode(tx, reward.id, redemptionId);
      if (!claimed) throw problem('conflict', "the reward's code pool is empty");
      return { code: claimed.code, codeId: claimed.codeId };
    }
  }
}

/** Redeems a reward offered in the member's program: refusals are outcomes (nothing changes), else all commits at once. */
export async function redeemReward(unit: UnitOfWork, workspaceId: string, memberId: string, rewardId: string, touched: Touched): Promise<RewardRedemptionOutcome> {
  const { tx, record, emit } = unit;
  const member = await findMember(tx, workspaceId, memberId);
  if (!member) throw problem('not_found', 'no such loyalty member');
  const customerId = member.customerId;
  if (!customerId) throw problem('conflict', 'the card belongs to no customer');
  const offer = await findOffer(tx, workspaceId, member.programId, rewardId);
  if (!offer) return refuse('reward_not_found', { rewardId });
  const reward = (await findReward(tx, workspaceId, rewardId, { lock: true }))!;
  if (!available(reward)) refuse('reward_inactive', { rewardId });
  if (!(await takeStock(tx, rewardId))) refuse('reward_out_of_stock', { rewardId });
  await lockVoucherRows(tx, workspaceId, [memberId, ...(await issueTargets(tx, workspaceId, reward, customerId))]);
  const [card] = await lockCards(tx, workspaceId, [memberId]);
  if (!card!.active) refuse('loyalty_member_inactive');
  if (reward.limitPerMember !== null && (await countMemberRedemptions(tx, workspaceId, memberId, rewardId)) >= reward.limitPerMember) {
    refuse('reward_limit_reached', { limit: reward.limitPerMember });
  }
  // The tier as it stands under the card's lock decides the price.
  const price = priceFor(offer, (await findMember(tx, workspaceId, memberId))!.tier?.id);
  const id = uuidv7();
  const debit = await debitPoints(tx, workspaceId, memberId, { points: price, type: 'REWARD_REDEMPTION', source: { type: 'reward_redemption', id } });
  if (!debit) refuse('loyalty_points_insufficient', { points: card!.balance, price });
  const issued = await issue(unit, workspaceId, reward, customerId, id, touched);
  const type = reward.rewardTypeId ? await findRewardType(tx, workspaceId, reward.rewardTypeId) : undefined;
  const waits = reward.type === 'MATERIAL' || (type !== undefined && type.fulfillment !== 'NONE');
  const stored = await insertRewardRedemption(tx, workspaceId, {
    id,
    memberId,
    customerId,
    rewardId,
    programId: member.programId,
    points: price,
    debitEntryId: debit!.entryId,
    status: waits ? 'PENDING_FULFILLMENT' : 'COMPLETED',
    issued,
  });
  const rewardRedemption = publicRedemption(stored);
  emit('loyalty.reward.redeemed', {
    memberId,
    customerId,
    points: price,
    rewardId,
    rewardRedemptionId: id,
    rewardKind: reward.type,
    status: stored.status,
    ...(rewardRedemption.issued ? { issued: rewardRedemption.issued } : {}),
    // `rewardTypeKey`, not `key`: fields named like secrets (an API key's `key`) are redacted from every payload.
    ...(type ? { rewardTypeId: type.id, rewardTypeKey: type.key, fulfillment: type.fulfillment, attributes: reward.attributes } : {}),
  });
  record({ resourceType: 'reward_redemption', resourceId: id, after: rewardRedemption });
  return { ok: true, rewardRedemption, member: { balance: debit!.balanceAfter } };
}

/**
 * Takes back what was issued: an unused voucher disabled, gift credits or points taken back, a pool's code voided.
 * `whole`: all of it or nothing (false when it was used: a redeemed voucher, credits or points spent); `up to the
 * balance`: as much of the credits or points as is left (false only for a used voucher).
 */
export async function takeBack(
  tx: Sql,
  workspaceId: string,
  issued: IssuedRecord | null,
  sourceId: string,
  mode: 'whole' | 'up to the balance',
  touched: Touched,
): Promise<boolean> {
  if (!issued) return true;
  if (issued.codeId) {
    await voidRewardCode(tx, issued.codeId);
  } else if (issued.voucherId && issued.amount === undefined) {
    if (!(await disableUnusedVoucher(tx, workspaceId, issued.voucherId))) return false;
    touched.codes.push(issued.voucherCode!);
  } else if (issued.voucherId && issued.amount !== undefined) {
    if ((await debitGiftCard(tx, workspaceId, issued.voucherId, issued.amount, mode)) === undefined) return false;
    touched.codes.push(issued.voucherCode!);
  } else if (issued.memberId && issued.points) {
    const [card] = await lockCards(tx, workspaceId, [issued.memberId]);
    const points = mode === 'whole' ? issued.points : Math.min(issued.points, Math.max(0, card?.balance ?? 0));
    if (points === 0) return mode !== 'whole';
    const debit = await debitPoints(tx, workspaceId, issued.memberId, { points, type: 'ADJUSTMENT', source: { type: 'reward_refund', id: sourceId } });
    if (!debit) return false;
  }
  return true;
}

const issuedVouchers = (issued: IssuedRecord | null): string[] => [issued?.voucherId, issued?.memberId].filter((id) => id !== undefined);

/** A refund (or a CANCELED fulfillment): what was issued taken back, the stock and the very points given back. */
export async function refundRewardRedemption(
  unit: UnitOfWork,
  workspaceId: string,
  id: string,
  to: 'REFUNDED' | 'CANCELED',
  touched: Touched,
): Promise<RewardRedemptionOutcome> {
  const { tx, record, emit } = unit;
  const stored = await lockRewardRedemption(tx, workspaceId, id);
  if (!stored) throw problem('not_found', 'no such reward redemption');
  if (stored.status === 'REFUNDED' || stored.status === 'CANCELED') throw problem('conflict', `the reward redemption is ${stored.status} already`);
  if (to === 'CANCELED' && stored.status !== 'PENDING_FULFILLMENT') throw problem('conflict', `only a redemption pending fulfillment can be canceled (it is ${stored.status})`);
  await findReward(tx, workspaceId, stored.rewardId, { lock: true });
  await lockVoucherRows(tx, workspaceId, [stored.memberId, ...issuedVouchers(stored.issued)]);
  if (!(await takeBack(tx, workspaceId, stored.issued, id, 'whole', touched))) {
    refuse('reward_already_used', stored.issued?.voucherCode ? { voucherCode: stored.issued.voucherCode } : undefined);
  }
  await giveBackStock(tx, stored.rewardId);
  const refund = await refundPoints(tx, workspaceId, stored.debitEntryId, { type: 'REWARD_REFUND', source: { type: 'reward_redemption', id } });
  await setRewardRedemptionStatus(tx, id, to);
  const after: StoredRewardRedemption = { ...stored, status: to };
  const balance = refund?.balanceAfter ?? (await findMember(tx, workspaceId, stored.memberId))!.balance;
  emit('loyalty.reward.refunded', { memberId: stored.memberId, points: refund?.points ?? 0, balance, rewardId: stored.rewardId, rewardRedemptionId: id, status: to });
  record({ resourceType: 'reward_redemption', resourceId: id, before: publicRedemption(stored), after: publicRedemption(after) });
  return { ok: true, rewardRedemption: publicRedemption(after), member: { balance } };
}

/** A pending fulfillment done (FULFILLED), or canceled (the points given back, as a refund does). */
export async function fulfilRewardRedemption(unit: UnitOfWork, workspaceId: string, id: string, status: 'FULFILLED' | 'CANCELED', touched: Touched): Promise<RewardRedemptionOutcome> {
  if (status === 'CANCELED') return refundRewardRedemption(unit, workspaceId, id, 'CANCELED', touched);
  const stored = await lockRewardRedemption(unit.tx, workspaceId, id);
  if (!stored) throw problem('not_found', 'no such reward redemption');
  if (stored.status !== 'PENDING_FULFILLMENT') throw problem('conflict', `the reward redemption is ${stored.status}, not PENDING_FULFILLMENT`);
  await setRewardRedemptionStatus(unit.tx, id, 'FULFILLED');
  const after = publicRedemption({ ...stored, status: 'FULFILLED' });
  unit.emit('loyalty.reward.fulfilled', { memberId: stored.memberId, points: stored.points, rewardId: stored.rewardId, rewardRedemptionId: id, status: 'FULFILLED' });
  unit.record({ resourceType: 'reward_redemption', resourceId: id, before: publicRedemption(stored), after });
  return { ok: true, rewardRedemption: after };
}
