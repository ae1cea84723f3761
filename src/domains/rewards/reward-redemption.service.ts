// Redeeming a reward for points, and taking it back. One transaction each: the reward's stock (its row locked, a
// guarded decrement), the member's card (locked; the points debited FIFO by expiry through loyalty_debit), and what
// is issued to the member's customer commit together or not at all. Racing members queue on the reward row, racing
// spends of one member on the card row, so neither stock nor points can be overspent.
import { randomBytes } from 'node:crypto';
import type { UnitOfWork } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { uuidv7 } from '../../platform/ids.js';
import type { Sql } from '../../platform/database.js';
import { findCampaign } from '../campaigns/index.js';
import { debitPoints, findMember, grantPoints, joinProgram, lockCards, placeMember, refundPoints, refuseWrite } from '../loyalty/index.js';
import { messageOf } from '../redemptions/redemption.rules.js';
import { applyVoucherTemplate, insertVoucher } from '../vouchers/index.js';
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
import type { Reward, RewardRedemptionOutcome } from './reward.schemas.js';

const CODE_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const rewardCode = () => 'RW-' + [...randomBytes(10)].map((b) => CODE_CHARS[b % CODE_CHARS.length]).join('');

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

/**
 * What the reward issues to the member's customer, in the caller's transaction. GIFT_CREDITS go onto the customer's
 * gift card of the campaign (made if missing) by a relative SQL update: a partition deciding on the card meanwhile
 * keeps its own guarded update, and forgets the card after the commit (the caller tells the engine).
 */
export async function issue(unit: Pick<UnitOfWork, 'tx' | 'emit'>, workspaceId: string, reward: Reward, customerId: string, redemptionId: string, touched: Touched): Promise<IssuedRecord | null> {
  const { tx } = unit;
  switch (reward.type) {
    case 'DISCOUNT_VOUCHER': {
      const campaign = await findCampaign(tx, workspaceId, reward.campaignId!);
      if (!campaign) throw problem('conflict', "the reward's campaign no longer exists");
      const fields = applyVoucherTemplate({ customerId }, campaign, 'reward.campaign.voucher');
      if (!fields.ok) throw problem('conflict', `the reward's campaign cannot make a voucher: ${fields.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
      const voucher = await insertVoucher(tx, workspaceId, campaign.id, rewardCode(), fields.fields);
      if (!voucher) throw problem('service_unavailable', 'a generated code collided; retry');
      touched.codes.push(voucher.code);
      return { voucherId: voucher.id, voucherCode: voucher.code };
    }
    case 'GIFT_CREDITS': {
      const card = await creditGiftCard(tx, workspaceId, reward.campaignId!, customerId, reward.amount!);
      touched.codes.push(card.code);
      return { voucherId: card.id, voucherCode: card.code, amount: reward.amount! };
    }
    case 'LOYALTY_POINTS': {
      const { member } = await joinProgram(unit, workspaceId, { programId: reward.campaignId!, customerId }, 'reuse');
      const granted = await grantPoints(tx, workspaceId, member.id, { points: reward.amount!, type: 'ADJUSTMENT', source: { type: 'reward_redemption', id: redemptionId }, reason: reward.name });
      await placeMember(unit, workspaceId, member.id);
      unit.emit('loyalty.points.adjusted', { memberId: member.id, points: reward.amount!, entryId: granted.entryId, balance: granted.balanceAfter, reason: 'reward' });
      return { memberId: member.id, points: reward.amount!, entryId: granted.entryId };
    }
    case 'MATERIAL':
    case 'CUSTOM':
      return null;
  }
}

/** The customer's gift card of a campaign, credited with `amount` (a CREDITS_ADDED entry); made when missing. */
async function creditGiftCard(tx: Sql, workspaceId: string, campaignId: string, customerId: string, amount: number): Promise<{ id: string; code: string }> {
  const { rows } = await tx.query<{ id: string; code: string; gift_balance: number }>(
    `UPDATE vouchers SET gift_balance = gift_balance + $4
      WHERE id = (SELECT id FROM vouchers WHERE workspace_id = $1 AND campaign_id = $2 AND customer_id = $3 AND type = 'GIFT_CARD' AND active
                   ORDER BY created_at LIMIT 1 FOR UPDATE)
        AND gift_balance + $4 <= 9007199254740991
      RETURNING id, code, gift_balance`,
    [workspaceId, campaignId, customerId, amount],
  );
  let card = rows[0];
  if (!card) {
    const campaign = await findCampaign(tx, workspaceId, campaignId);
    if (!campaign) throw problem('conflict', "the reward's campaign no longer exists");
    const fields = applyVoucherTemplate({ type: 'GIFT_CARD', customerId, gift: { amount, currency: campaign.currency ?? 'EUR' } }, campaign, 'reward.campaign.voucher');
    if (!fields.ok) throw problem('conflict', `the reward's campaign cannot make a gift card: ${fields.errors.map((e) => e.message).join('; ')}`);
    const made = await insertVoucher(tx, workspaceId, campaignId, rewardCode(), fields.fields);
    if (!made) throw problem('service_unavailable', 'a generated code collided; retry');
    card = { id: made.id, code: made.code, gift_balance: amount };
  }
  await tx.query(`INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after) VALUES ($1, $2, 'CREDITS_ADDED', $3, $4)`, [
    workspaceId,
    card.id,
    amount,
    card.gift_balance,
  ]);
  return card;
}

/** Redeems a reward offered in the member's program: refusals are outcomes (nothing changes), else all commits at once. */
export async function redeemReward(unit: UnitOfWork, workspaceId: string, memberId: string, rewardId: string, touched: Touched): Promise<RewardRedemptionOutcome> {
  const { tx, record, emit } = unit;
  const member = await findMember(tx, workspaceId, memberId);
  if (!member) throw problem('not_found', 'no such loyalty member');
  const customerId = member.customerId;
  if (!customerId) throw problem('conflict', 'the card belongs to no customer');
  const offer = await findOffer(tx, workspaceId, member.programId, rewardId);
  if (!offer) refuse('reward_not_found', { rewardId });
  // The reward row first (stock), then the card (points): every redemption locks in this order.
  const reward = (await findReward(tx, workspaceId, rewardId, { lock: true }))!;
  if (!available(reward)) refuse('reward_inactive', { rewardId });
  if (!(await takeStock(tx, rewardId))) refuse('reward_out_of_stock', { rewardId });
  const [card] = await lockCards(tx, workspaceId, [memberId]);
  if (!card!.active) refuse('loyalty_member_inactive');
  if (reward.limitPerMember !== null && (await countMemberRedemptions(tx, workspaceId, memberId, rewardId)) >= reward.limitPerMember) {
    refuse('reward_limit_reached', { limit: reward.limitPerMember });
  }
  const id = uuidv7();
  const debit = await debitPoints(tx, workspaceId, memberId, { points: offer!.points, type: 'REWARD_REDEMPTION', source: { type: 'reward_redemption', id } });
  if (!debit) refuse('loyalty_points_insufficient', { points: card!.balance, price: offer!.points });
  const issued = await issue(unit, workspaceId, reward, customerId, id, touched);
  const type = reward.rewardTypeId ? await findRewardType(tx, workspaceId, reward.rewardTypeId) : undefined;
  const waits = reward.type === 'MATERIAL' || (type !== undefined && type.fulfillment !== 'NONE');
  const stored = await insertRewardRedemption(tx, workspaceId, {
    id,
    memberId,
    customerId,
    rewardId,
    programId: member.programId,
    points: offer!.points,
    debitEntryId: debit!.entryId,
    status: waits ? 'PENDING_FULFILLMENT' : 'COMPLETED',
    issued,
  });
  const rewardRedemption = publicRedemption(stored);
  emit('loyalty.reward.redeemed', {
    memberId,
    customerId,
    points: offer!.points,
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
 * Takes back what was issued: an unused voucher disabled, gift credits or points taken back. `whole`: all of it or
 * nothing (false when it was used: a redeemed voucher, credits or points spent); `up to the balance`: as much of the
 * credits or points as is left (false only for a used voucher).
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
  if (issued.voucherId && issued.amount === undefined) {
    const { rowCount } = await tx.query('UPDATE vouchers SET active = false WHERE id = $1 AND redeemed_count = 0', [issued.voucherId]);
    if (!rowCount) return false;
    touched.codes.push(issued.voucherCode!);
  } else if (issued.voucherId && issued.amount !== undefined) {
    const { rows } = await tx.query<{ gift_balance: number; taken: number }>(
      `UPDATE vouchers v SET gift_balance = v.gift_balance - t.taken
         FROM (SELECT id, CASE WHEN $3 THEN $2::bigint ELSE least($2::bigint, gift_balance) END AS taken FROM vouchers WHERE id = $1 FOR UPDATE) t
        WHERE v.id = t.id AND v.gift_balance >= t.taken
        RETURNING v.gift_balance, t.taken`,
      [issued.voucherId, issued.amount, mode === 'whole'],
    );
    if (!rows[0]) return false;
    if (rows[0].taken > 0) {
      await tx.query(`INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after) VALUES ($1, $2, 'ADJUSTMENT', $3, $4)`, [
        workspaceId,
        issued.voucherId,
        -rows[0].taken,
        rows[0].gift_balance,
      ]);
    }
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
  await lockCards(tx, workspaceId, [stored.memberId]);
  if (!(await takeBack(tx, workspaceId, stored.issued, id, 'whole', touched))) {
    refuse('reward_already_used', stored.issued?.voucherCode ? { voucherCode: stored.issued.voucherCode } : undefined);
  }
  await giveBackStock(tx, stored.rewardId);
  const refund = await refundPoints(tx, workspaceId, stored.debitEntryId, { type: 'REWARD_REFUND', source: { type: 'reward_redemption', id } });
  await setRewardRedemptionStatus(tx, id, to);
  const after: StoredRewardRedemption = { ...stored, status: to };
  emit('loyalty.points.adjusted', { memberId: stored.memberId, points: refund?.points ?? 0, reason: 'reward refund', rewardRedemptionId: id });
  record({ resourceType: 'reward_redemption', resourceId: id, before: publicRedemption(stored), after: publicRedemption(after) });
  return { ok: true, rewardRedemption: publicRedemption(after), member: { balance: refund?.balanceAfter ?? (await findMember(tx, workspaceId, stored.memberId))!.balance } };
}

/** A pending fulfillment done (FULFILLED), or canceled (the points given back, as a refund does). */
export async function fulfilRewardRedemption(unit: UnitOfWork, workspaceId: string, id: string, status: 'FULFILLED' | 'CANCELED', touched: Touched): Promise<RewardRedemptionOutcome> {
  if (status === 'CANCELED') return refundRewardRedemption(unit, workspaceId, id, 'CANCELED', touched);
  const stored = await lockRewardRedemption(unit.tx, workspaceId, id);
  if (!stored) throw problem('not_found', 'no such reward redemption');
  if (stored.status !== 'PENDING_FULFILLMENT') throw problem('conflict', `the reward redemption is ${stored.status}, not PENDING_FULFILLMENT`);
  await setRewardRedemptionStatus(unit.tx, id, 'FULFILLED');
  const after = publicRedemption({ ...stored, status: 'FULFILLED' });
  unit.record({ resourceType: 'reward_redemption', resourceId: id, before: publicRedemption(stored), after });
  return { ok: true, rewardRedemption: after };
}
