// Earning and its reversal: the reactions to order.paid, order.canceled and customer.segment.entered (run by the
// worker, one inbox event per transaction), and custom events (run in their operation's unit of work). Each earning
// claims its once-only key (rule, order | segment and customer | custom event) under the lock of the card it credits.
import type { Sql } from '../../platform/database.js';
import { evaluateConditions, type RuleFacts } from '../rules/index.js';
import type { Order } from '../redemptions/redemption.schemas.js';
import { loadCustomerFacts } from '../segments/index.js';
import { earnedPoints, earningTimes } from './earning.rules.js';
import type { EarningRule, EarningTrigger } from './earning-rule.schemas.js';
import { findMemberOf, findMultiplier } from './member.queries.js';
import { joinProgram, placeMember, type LoyaltyWork } from './member.service.js';
import { grantPoints, isPointsOutOfRange, lockCards, reverseEarning } from './points-ledger.queries.js';
import { findActiveRules, type ProgramSettingsRow } from './program.queries.js';
import {
  countEarnings,
  earnedBefore,
  findOrderEarnings,
  findProgramSettings,
  findRuleConditions,
  insertEarning,
  lockOrderForReaction,
  type InboxEvent,
} from './reaction.queries.js';

export interface EarningEffect {
  type: 'POINTS_EARNED';
  memberId: string;
  programId: string;
  earningRuleId: string;
  points: number;
  pending: boolean;
}

interface Occasion {
  trigger: EarningTrigger;
  /** The once-only key of this occasion for a rule. */
  reactionKey: string;
  source: { type: string; id: string };
  orderId: string | null;
  order?: Order | undefined;
  /** What the customer paid (PER_AMOUNT counts it); 0 without an order. */
  paid: number;
}

type RuleWithProgram = EarningRule & { program: ProgramSettingsRow };

async function conditionsHold(tx: Sql, workspaceId: string, rule: EarningRule, facts: RuleFacts): Promise<boolean> {
  const rules = await findRuleConditions(tx, workspaceId, rule.validationRuleIds);
  return rules.every((r) => evaluateConditions(r.conditions, facts).ok);
}

/** Grants under a savepoint: a grant past 2^53-1 is skipped, not a failure of the whole reaction. */
async function grantWithinBounds(tx: Sql, grant: () => Promise<{ entryId: string; pending: boolean; bucketId: string; balanceAfter: number }>) {
  await tx.query('SAVEPOINT loyalty_grant');
  try {
    const granted = await grant();
    await tx.query('RELEASE SAVEPOINT loyalty_grant');
    return granted;
  } catch (error) {
    await tx.query('ROLLBACK TO SAVEPOINT loyalty_grant');
    if (isPointsOutOfRange(error)) return undefined;
    throw error;
  }
}

async function earnByRule(work: LoyaltyWork, workspaceId: string, rule: RuleWithProgram, customerId: string, occasion: Occasion, facts: RuleFacts): Promise<EarningEffect | undefined> {
  const { tx, emit } = work;
  let member = await findMemberOf(tx, workspaceId, rule.programId, customerId);
  if (!member) {
    if (rule.program.loyalty.autoJoin === false) return undefined;
    member = (await joinProgram(work, workspaceId, { programId: rule.programId, customerId }, 'reuse')).member;
  }
  const [card] = await lockCards(tx, workspaceId, [member.id]);
  if (!card?.active) return undefined;
  if (await earnedBefore(tx, workspaceId, rule.id, occasion.reactionKey)) return undefined;
  if (rule.limits?.perMember !== undefined && (await countEarnings(tx, member.id, rule.id)) >= rule.limits.perMember) return undefined;
  if (!(await conditionsHold(tx, workspaceId, rule, facts))) return undefined;
  const points = earnedPoints(rule.points, occasion.paid, await findMultiplier(tx, member.id));
  if (points <= 0) return undefined;
  const times = earningTimes(rule.program.loyalty, new Date());
  const granted = await grantWithinBounds(tx, () =>
    grantPoints(tx, workspaceId, member.id, {
      points,
      type: 'POINTS_EARNED',
      activatesAt: times.activatesAt,
      expiresAt: times.expiresAt,
      source: occasion.source,
      orderId: occasion.orderId,
      earningRuleId: rule.id,
    }),
  );
  if (!granted) return undefined;
  await insertEarning(tx, workspaceId, { ruleId: rule.id, memberId: member.id, reactionKey: occasion.reactionKey, orderId: occasion.orderId, bucketId: granted.bucketId, points });
  emit('loyalty.points.earned', {
    memberId: member.id,
    programId: rule.programId,
    customerId,
    points,
    pending: granted.pending,
    earningRuleId: rule.id,
    ...(occasion.orderId ? { orderId: occasion.orderId } : {}),
    entryId: granted.entryId,
    balance: granted.balanceAfter,
  });
  if (!granted.pending) await placeMember(work, workspaceId, member.id);
  return { type: 'POINTS_EARNED', memberId: member.id, programId: rule.programId, earningRuleId: rule.id, points, pending: granted.pending };
}

async function earnByRules(work: LoyaltyWork, workspaceId: string, rules: RuleWithProgram[], customerId: string, occasion: Occasion): Promise<EarningEffect[]> {
  if (rules.length === 0) return [];
  const customer = await loadCustomerFacts(work.tx, workspaceId, { id: customerId });
  const facts: RuleFacts = { order: occasion.order, customer };
  const effects: EarningEffect[] = [];
  for (const rule of rules) {
    const effect = await earnByRule(work, workspaceId, rule, customerId, occasion, facts);
    if (effect) effects.push(effect);
  }
  return effects;
}

/** order.paid: each ORDER_PAID rule once per order, on what the customer paid; nothing for an order canceled since. */
export async function earnForPaidOrder(work: LoyaltyWork, workspaceId: string, orderId: string): Promise<EarningEffect[]> {
  const order = await lockOrderForReaction(work.tx, workspaceId, orderId);
  if (!order || order.status === 'CANCELED' || !order.customerId) return [];
  const rules = await findActiveRules(work.tx, workspaceId, 'ORDER_PAID');
  const cart: Order = { id: order.sourceId ?? order.id, amount: order.amount, currency: order.currency, items: order.items, metadata: order.metadata };
  return earnByRules(work, workspaceId, rules, order.customerId, {
    trigger: 'ORDER_PAID',
    reactionKey: `order:${order.id}`,
    source: { type: 'order', id: order.id },
    orderId: order.id,
    order: cart,
    paid: order.paid,
  });
}

/** order.canceled: every earning of the order taken back once, pending ones first, as each program's reversal says. */
export async function reverseForCanceledOrder(work: LoyaltyWork, workspaceId: string, orderId: string): Promise<number> {
  const { tx, emit } = work;
  const order = await lockOrderForReaction(tx, workspaceId, orderId);
  if (!order) return 0;
  const settings = new Map<string, Record<string, unknown> | undefined>();
  let reversed = 0;
  for (const earning of await findOrderEarnings(tx, workspaceId, orderId)) {
    if (!settings.has(earning.programId)) settings.set(earning.programId, await findProgramSettings(tx, workspaceId, earning.programId));
    const reversal = (settings.get(earning.programId)?.reversal as { earned?: string } | undefined)?.earned;
    const mode = reversal === 'ALLOW_NEGATIVE' ? 'ALLOW_NEGATIVE' : 'TO_ZERO';
    const done = await reverseEarning(tx, workspaceId, earning.id, mode, { type: 'order', id: orderId });
    if (!done) continue;
    reversed += 1;
    emit('loyalty.points.reversed', {
      memberId: done.memberId,
      points: done.points,
      pendingPoints: done.pendingPoints,
      orderId,
      earningRuleId: earning.ruleId,
      entryId: done.entryId,
      balance: done.balanceAfter,
    });
    await placeMember(work, workspaceId, done.memberId);
  }
  return reversed;
}

/** customer.segment.entered: each SEGMENT_ENTERED rule of that segment once per customer. */
export async function earnForSegmentEntered(work: LoyaltyWork, workspaceId: string, segmentId: string, customerId: string): Promise<EarningEffect[]> {
  const rules = await findActiveRules(work.tx, workspaceId, 'SEGMENT_ENTERED', { segmentId });
  return earnByRules(work, workspaceId, rules, customerId, {
    trigger: 'SEGMENT_ENTERED',
    reactionKey: `segment:${segmentId}:${customerId}`,
    source: { type: 'segment', id: segmentId },
    orderId: null,
    paid: 0,
  });
}

/** A custom event: each CUSTOM_EVENT rule named after it, once for this event. */
export async function earnForCustomEvent(work: LoyaltyWork, workspaceId: string, event: { id: string; name: string; customerId: string }): Promise<EarningEffect[]> {
  const rules = await findActiveRules(work.tx, workspaceId, 'CUSTOM_EVENT', { eventName: event.name });
  return earnByRules(work, workspaceId, rules, event.customerId, {
    trigger: 'CUSTOM_EVENT',
    reactionKey: `custom:${event.id}`,
    source: { type: 'custom_event', id: event.id },
    orderId: null,
    paid: 0,
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The reaction to one inbox event, in the transaction that removes it from the inbox. Malformed payloads do nothing. */
export async function reactToEvent(work: LoyaltyWork, event: InboxEvent): Promise<void> {
  const p = event.payload;
  const id = (value: unknown) => (typeof value === 'string' && UUID.test(value) ? value : undefined);
  switch (event.type) {
    case 'order.paid': {
      const orderId = id(p.orderId);
      if (orderId) await earnForPaidOrder(work, event.workspaceId, orderId);
      return;
    }
    case 'order.canceled': {
      const orderId = id(p.orderId);
      if (orderId) await reverseForCanceledOrder(work, event.workspaceId, orderId);
      return;
    }
    case 'customer.segment.entered': {
      const segmentId = id(p.segmentId);
      const customerId = id(p.customerId);
      if (segmentId && customerId) await earnForSegmentEntered(work, event.workspaceId, segmentId, customerId);
      return;
    }
  }
}
