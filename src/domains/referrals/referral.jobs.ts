// The worker's referral reactions: order.paid confirms the order's conversions, order.canceled reverts them;
// referral.conversion.confirmed / .reverted grant or take back the rewards. Each reaction runs in the transaction that
// deletes its inbox row, so it commits exactly once (a worker killed midway rolls back; the row is taken again).
import { withTransaction, type Pool } from '../../platform/database.js';
import { startInboxLoops, type InboxLoops } from '../../platform/inbox-loops.js';
import type { Logger } from '../../platform/logger.js';
import { recordEvents, type NewEvent } from '../events/index.js';
import { confirmOrderConversions, revertOrderConversions, takeReferralEvent, type ConversionChange, type ReferralInboxEvent } from './conversion.queries.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function conversionPayload(c: ConversionChange, reason?: string) {
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

async function react(tx: Parameters<Parameters<typeof withTransaction>[1]>[0], event: ReferralInboxEvent, emit: (e: NewEvent) => void): Promise<void> {
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
    case 'referral.conversion.reverted':
      // Rewards of each side are granted and taken back here once the rewards catalog issues them.
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
