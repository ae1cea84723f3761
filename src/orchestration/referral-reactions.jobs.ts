// The worker's referral reactions, above referrals and rewards: order.paid confirms the order's conversions,
// order.canceled reverts them; referral.conversion.confirmed / .reverted grant or take back the rewards. Each reaction
// runs in the transaction that deletes its inbox row, so it commits exactly once (a killed worker's row is taken again).
import { recordEvents, type NewEvent } from '../domains/events/index.js';
import { grantReward, revokeGrant, type IssuedRecord } from '../domains/rewards/index.js';
import { withTransaction, type Pool, type Sql } from '../platform/database.js';
import { startInboxLoops, type InboxLoops } from '../platform/inbox-loops.js';
import type { Logger } from '../platform/logger.js';
import {
  claimOutcome,
  confirmOrderConversions,
  grantedOutcomes,
  lockConversionForRewards,
  revertOrderConversions,
  settleOutcome,
  takeReferralEvent,
  type ConversionChange,
  type ReferralInboxEvent,
  publicIssued,
} from '../domains/referrals/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function conversionPayload(c: ConversionChange, reason?: string) {
  return {
    conversionId: c.id,
    programId: c.programId,
    code: c.code,
    referrerCustomerId: c.referrerCustomerId,
    refereeCustomerId: c.refereeCustomerId,
    ...(c.orderId ? { orderId: c.orderId } : {}),
    ...(c.redemptionId ? { redemptionId: c.redemptionId } : {}),
    ...(reason ? { reason } : {}),
  };
}

/**
 * A confirmed conversion's rewards: each (side, reward) once, from the rewards catalog to the referrer's and the
 * referee's customer; one that cannot be issued (gone, inactive, out of stock) is FAILED with why.
 */
async function grantRewards(tx: Sql, workspaceId: string, conversionId: string, emit: (e: NewEvent) => void): Promise<void> {
  const c = await lockConversionForRewards(tx, workspaceId, conversionId);
  if (!c || c.status !== 'CONFIRMED') return;
  const sides = [
    ...c.referrerRewards.map((r) => ({ side: 'REFERRER' as const, rewardId: r.rewardId, customerId: c.referrerCustomerId })),
    ...(c.refereeRewardId ? [{ side: 'REFEREE' as const, rewardId: c.refereeRewardId, customerId: c.refereeCustomerId }] : []),
  ];
  const unit = { tx, emit: (type: NewEvent['type'], payload: Record<string, unknown>) => emit({ workspaceId, type, payload }) };
  for (const s of sides) {
    if (!(await claimOutcome(tx, workspaceId, c.id, s.side, s.rewardId))) continue;
    const grant = await grantReward(unit, workspaceId, s.rewardId, s.customerId, c.id, { codes: [] });
    if (grant.status === 'GRANTED') {
      await settleOutcome(tx, c.id, s.side, s.rewardId, 'GRANTED', grant.issued as Record<string, unknown> | null, null);
      emit({ workspaceId, type: 'referral.reward.granted', payload: { conversionId: c.id, side: s.side, rewardId: s.rewardId, customerId: s.customerId, ...(grant.issued ? { issued: publicIssued(grant.issued as Record<string, unknown>) } : {}) } });
    } else {
      await settleOutcome(tx, c.id, s.side, s.rewardId, 'FAILED', null, grant.detail);
    }
  }
}

/** A reverted conversion's granted rewards taken back as far as they can be (an unused voucher, credits and points left). */
async function revokeRewards(tx: Sql, workspaceId: string, conversionId: string): Promise<void> {
  for (const o of await grantedOutcomes(tx, conversionId)) {
    const taken = await revokeGrant({ tx }, workspaceId, o.issued as IssuedRecord | null, conversionId, { codes: [] });
    await settleOutcome(tx, conversionId, o.side, o.rewardId, 'REVERTED', null, taken ? null : 'used before the conversion was reverted');
  }
}


async function react(tx: Sql, event: ReferralInboxEvent, emit: (e: NewEvent) => void): Promise<void> {
  const orderId = typeof event.payload.orderId === 'string' && UUID.test(event.payload.orderId) ? event.payload.orderId : undefined;
  switch (event.type) {
    case 'order.paid':
      if (!orderId) return;
      for (const c of await confirmOrderConversions(tx, event.workspaceId, orderId)) {
        emit({ workspaceId: event.workspaceId, type: 'referral.conversion.confirmed', payload: conversionPayload(c) });
      }
      return;
    case 'order.canceled':
      if (!orderId) return;
      for (const c of await revertOrderConversions(tx, event.workspaceId, orderId)) {
        emit({ workspaceId: event.workspaceId, type: 'referral.conversion.reverted', payload: conversionPayload(c, 'ORDER_CANCELED') });
      }
      return;
    case 'referral.conversion.confirmed':
      if (typeof event.payload.conversionId === 'string' && UUID.test(event.payload.conversionId)) await grantRewards(tx, event.workspaceId, event.payload.conversionId, emit);
      return;
    case 'referral.conversion.reverted':
      if (typeof event.payload.conversionId === 'string' && UUID.test(event.payload.conversionId)) await revokeRewards(tx, event.workspaceId, event.payload.conversionId);
      return;
  }
}

/** Reacts to the oldest free referral inbox event; false when there was none. */
export async function reactToNextReferralEvent(pool: Pool): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    const event = await takeReferralEvent(tx);
    if (!event) return false;
    const events: NewEvent[] = [];
    await react(tx, event, (e) => events.push(e));
    await recordEvents(tx, events);
    return true;
  });
}

export function startReferralJobs(options: { pool: Pool; log: Logger; concurrency?: number; pollMs?: number }): InboxLoops {
  const { pool, log } = options;
  return startInboxLoops(() => reactToNextReferralEvent(pool), { concurrency: options.concurrency ?? 2, pollMs: options.pollMs ?? 200, log, what: 'referral reaction' });
}
