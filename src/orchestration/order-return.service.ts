// An order's return, in its operation's unit of work (the order row locked: returns of one order take turns).
// A partial return gives back, in this transaction, the discount on the returned share (recorded on the redemptions),
// the gift credits and points that paid for it (cards locked in id order, entries typed RETURN) and the points it
// earned (recomputed on what remains paid). The return that leaves nothing rolls the order's redemptions back through
// the engine first (reason RETURN: each use, the gift credits and points left, budgets, per-customer uses and the
// redemption's referral conversion come back exactly as a rollback does, and the partitions' cached state with them),
// then records the rest here and reverts the order's referral conversions (their rewards are taken back by the
// worker's referral.conversion.reverted reaction, as far as they go).
import type { AuditTrail, UnitOfWork } from '../contract/handler.js';
import { RETURN_REASON, type RedemptionEngine } from '../contract/engine-port.js';
import { invalidField, problem } from '../contract/problems.js';
import { uuidv7 } from '../platform/ids.js';
import { hasOrderEarnings, reduceOrderEarnings } from '../domains/loyalty/index.js';
import { ORDER_STATUS_MOVES, type OrderStatus } from '../domains/orders/index.js';
import { revertOrderConversions } from '../domains/referrals/index.js';
import {
  addRedemptionReturns,
  creditGiftCard,
  findStandingRedemptions,
  insertReturn,
  lockOrderForReturn,
  lockVouchers,
  refundPaidPoints,
  setOrderReturned,
  type OrderForReturn,
  type StandingRedemption,
} from './order-return.queries.js';
import { moneyPaidOf, paidOf, planReturn, type ReturnAsk, type ReturnPlan } from './order-return.rules.js';
import type { OrderReturnReply } from './order-return.schemas.js';
import { conversionPayload } from './referral-reactions.jobs.js';

export interface ReturnContext {
  engine: RedemptionEngine;
  trail: AuditTrail;
  /** Codes whose partition caches a return changed outside the engine (told after the commit). */
  changed: Set<string>;
}

/** The return as its operation answers it, and what it changed (the codes whose cached state is stale). */
export async function returnOrder(
  unit: UnitOfWork,
  ctx: ReturnContext,
  workspaceId: string,
  orderId: string,
  body: { ask: ReturnAsk; reason?: string | undefined },
): Promise<OrderReturnReply> {
  const order = await lockOrderForReturn(unit.tx, workspaceId, orderId);
  if (!order) throw problem('not_found', 'no such order');
  if (order.status === 'CANCELED') throw problem('conflict', 'a canceled order was returned whole when it was canceled');
  const reply = await giveBack(unit, ctx, workspaceId, order, body.ask, body.reason ?? null, false);
  unit.record({ resourceType: 'order_return', resourceId: reply.id, after: reply });
  return reply;
}

/**
 * Before an order moves to CANCELED: what is left of it is returned whole (the same effects as a return), under the
 * lock the move takes. Nothing (no return) when the order moved nothing: no redemption stands, no earning.
 */
export async function returnBeforeCancel(unit: UnitOfWork, ctx: ReturnContext, workspaceId: string, orderId: string): Promise<void> {
  const order = await lockOrderForReturn(unit.tx, workspaceId, orderId);
  // A move the order cannot make is refused by the move itself, before anything is given back.
  if (!order || !(ORDER_STATUS_MOVES[order.status as OrderStatus] ?? []).includes('CANCELED')) return;
  const standing = await findStandingRedemptions(unit.tx, workspaceId, order, false);
  if (standing.length === 0 && !(await hasOrderEarnings(unit.tx, workspaceId, order.id))) return;
  const left = paidOf({ amount: order.amount, redemptions: standing }) - order.returnedAmount;
  await giveBack(unit, ctx, workspaceId, order, { amount: Math.max(0, left) }, 'CANCELED', true);
}

async function giveBack(
  unit: UnitOfWork,
  ctx: ReturnContext,
  workspaceId: string,
  order: OrderForReturn,
  ask: ReturnAsk,
  reason: string | null,
  canceling: boolean,
): Promise<OrderReturnReply> {
  const { tx, emit } = unit;
  if (order.status === 'RETURNED') throw problem('return_exceeds_order', 'the order was returned whole already');
  let standing = await findStandingRedemptions(tx, workspaceId, order, false);
  let plan = decide(order, standing, ask);
  const id = uuidv7();
  if (plan.whole) {
    // The engine rolls them back before this transaction writes a redemption row (its statements would wait on it).
    await rollBackThroughEngine(ctx, workspaceId, standing, canceling ? 'ORDER_CANCELED' : 'ORDER_RETURNED');
  } else {
    // The redemptions, then the cards in id order: the order the engine's statement locks them in (a rollback's
    // redemption rows, then the vouchers), so the two never deadlock; a rollback racing this return sees what it gave
    // back (its guard reads returned_credit), or goes first and the redemption no longer stands.
    standing = await findStandingRedemptions(tx, workspaceId, order, true);
    await lockVouchers(tx, standing.filter((r) => r.kind !== 'DISCOUNT').map((r) => r.voucherId));
    plan = decide(order, standing, ask);
    if (plan.whole) throw problem('conflict', "the order's redemptions changed while it was being returned; retry");
    await giveCreditsBack(unit, ctx, workspaceId, id, order.id, standing, plan);
  }
  await addRedemptionReturns(tx, plan.reversals);
  const paid = paidOf({ amount: order.amount, redemptions: standing });
  const after = order.returnedAmount + plan.amount;
  const pointsEarned = await reduceOrderEarnings(
    { tx, emit },
    workspaceId,
    order.id,
    { paid: moneyPaidOf({ amount: order.amount, redemptions: standing }), left: plan.whole ? 0 : paid - after, of: paid },
    { type: 'return', id },
  );
  if (plan.whole) {
    for (const c of await revertOrderConversions(tx, workspaceId, order.id)) emit('referral.conversion.reverted', conversionPayload(c, canceling ? 'ORDER_CANCELED' : 'ORDER_RETURNED'));
  }
  const status = canceling ? 'CANCELED' : plan.whole ? 'RETURNED' : 'PARTIALLY_RETURNED';
  // A cancel's own move sets the status (with its event and audit entry); the return keeps the one it found.
  await setOrderReturned(tx, workspaceId, order.id, { amount: after, units: plan.units, status: canceling ? order.status : status });
  const sum = (kind: (r: ReturnPlan['reversals'][number]) => number) => plan.reversals.reduce((s, r) => s + kind(r), 0);
  const reply: OrderReturnReply = {
    id,
    orderId: order.id,
    amount: plan.amount,
    items: plan.items,
    reversals: {
      discount: sum((r) => r.discount),
      giftCredits: sum((r) => (r.kind === 'GIFT' ? r.credit : 0)),
      pointsPaid: sum((r) => (r.kind === 'POINTS' ? r.credit : 0)),
      pointsEarned,
    },
    ...(reason !== null ? { reason } : {}),
    createdAt: new Date().toISOString(),
    status,
  };
  await insertReturn(tx, workspaceId, { ...reply, reason });
  emit('order.returned', { orderId: order.id, returnId: id, amount: plan.amount, status });
  return reply;
}

function decide(order: OrderForReturn, standing: StandingRedemption[], ask: ReturnAsk): ReturnPlan {
  const decision = planReturn({ amount: order.amount, lines: order.lines, returnedAmount: order.returnedAmount, returnedUnits: order.returnedUnits, redemptions: standing }, ask);
  if (decision.ok) return decision.plan;
  if (decision.problem === 'invalid_request') throw invalidField(decision.field ?? 'body', decision.detail);
  throw problem('return_exceeds_order', decision.detail);
}

/** The last return: every standing redemption rolled back by its partition, reason RETURN. */
async function rollBackThroughEngine(ctx: ReturnContext, workspaceId: string, standing: readonly StandingRedemption[], conversionReason: 'ORDER_RETURNED' | 'ORDER_CANCELED'): Promise<void> {
  const outcomes = await Promise.all(
    standing.map((r) =>
      ctx.engine.rollback({ workspaceId, code: r.voucherCode, redemptionId: r.id, campaignId: r.campaignId ?? undefined, reason: RETURN_REASON, conversionReason, audit: ctx.trail }),
    ),
  );
  for (const outcome of outcomes) {
    // Rolled back by someone else meanwhile: it gave everything back already.
    if (!outcome.ok && outcome.code !== 'redemption_already_rolled_back') throw problem('conflict', `a redemption of the order could not be rolled back: ${outcome.message}`);
  }
}

/** A partial return's gift credits and points back onto their cards, in this transaction. */
async function giveCreditsBack(unit: UnitOfWork, ctx: ReturnContext, workspaceId: string, returnId: string, orderId: string, standing: readonly StandingRedemption[], plan: ReturnPlan): Promise<void> {
  for (const [i, reversal] of plan.reversals.entries()) {
    const r = standing[i]!;
    if (reversal.credit <= 0) continue;
    if (r.kind === 'GIFT') {
      const credited = await creditGiftCard(unit.tx, workspaceId, r.voucherId, r.id, reversal.credit);
      if (!credited) continue;
      ctx.changed.add(credited.code);
      unit.emit('voucher.balance.adjusted', { voucherId: r.voucherId, code: credited.code, amount: reversal.credit, balance: credited.balance, entryType: 'RETURN', redemptionId: r.id, returnId, orderId });
    } else if (r.kind === 'POINTS' && r.pointsEntryId) {
      const refunded = await refundPaidPoints(unit.tx, workspaceId, r.pointsEntryId, reversal.credit, returnId);
      if (!refunded) continue;
      ctx.changed.add(r.voucherCode);
      unit.emit('loyalty.points.adjusted', { memberId: refunded.member_id, points: refunded.points, entryId: refunded.entry_id, balance: refunded.balance_after, reason: 'RETURN', redemptionId: r.id, returnId, orderId });
    }
  }
}
