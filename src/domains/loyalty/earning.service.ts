// Earning and its reversal: the reactions to order.paid, order.canceled and customer.segment.entered (run by the
// worker, one inbox event per transaction), and custom events (run in their operation's unit of work). Each earning
// claims its once-only key (rule, order | segment and customer | custom event) under the lock of the card it credits.
import type { Sql } from '../../platform/database.js';
import { evaluateConditions, type RuleFacts } from '../../checkout/condition.rules.js';
import { type ConditionTree } from '../../contract/condition.schemas.js';
import type { Order } from '../../contract/checkout.schemas.js';
import { loadCustomerFacts } from '../segments/index.js';
import { earnedPoints, earningTimes } from './earning.rules.js';
import type { EarningRule, EarningTrigger } from './earning-rule.schemas.js';
import { findMemberId, findMultiplier } from './member.queries.js';
import { joinProgram, placeMember, type LoyaltyWork } from './member.service.js';
import { earnPoints, lockCards, reverseEarning } from './points-ledger.queries.js';
import { findActiveRules, type ProgramSettingsRow } from './program.queries.js';
import { recordEarningMultiplier } from './return-earning.service.js';
import {
  countEarnings,
  findEarnedRules,
  findOrderEarnings,
  findProgramSettings,
  findRuleConditions,
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

const MAX = Number.MAX_SAFE_INTEGER;

/** The validation rules of these earning rules, by id, in one read (rules deleted since are left out: they hold). */
async function conditionsOf(tx: Sql, workspaceId: string, rules: readonly EarningRule[]): Promise<Map<string, ConditionTree>> {
  const ids = [...new Set(rules.flatMap((r) => r.validationRuleIds))];
  return new Map((await findRuleConditions(tx, workspaceId, ids)).map((r) => [r.id, r.conditions]));
}

/**
 * The rules of one program for one customer: the card found (or joined by autoJoin) and locked once, the rules that
 * earned for this occasion before read at once; each other rule whose conditions hold earns its points (times the
 * tier multiplier) in one call with its once-only key; the member is placed in its tier once at the end.
 */
async function earnInProgram(work: LoyaltyWork, workspaceId: string, rules: RuleWithProgram[], customerId: string, occasion: Occasion, facts: RuleFacts): Promise<EarningEffect[]> {
  const { tx, emit } = work;
  const program = rules[0]!.program;
  let memberId = await findMemberId(tx, workspaceId, program.id, customerId);
  if (!memberId) {
    if (program.loyalty.autoJoin === false) return [];
    memberId = (await joinProgram(work, workspaceId, { programId: program.id, customerId }, 'reuse')).member.id;
  }
  const [card] = await lockCards(tx, workspaceId, [memberId]);
  if (!card?.active) return [];
  const earned = await findEarnedRules(tx, workspaceId, rules.map((r) => r.id), occasion.reactionKey);
  const open = rules.filter((r) => !earned.has(r.id));
  if (open.length === 0) return [];
  const conditions = await conditionsOf(tx, workspaceId, open);
  const multiplier = await findMultiplier(tx, card.id);
  const times = earningTimes(program.loyalty, new Date());
  const effects: EarningEffect[] = [];
  let { balance, pending, lifetime } = card;
  for (const rule of open) {
    if (!rule.validationRuleIds.every((id) => !conditions.has(id) || evaluateConditions(conditions.get(id)!, facts).ok)) continue;
    if (rule.limits?.perMember !== undefined && (await countEarnings(tx, card.id, rule.id)) >= rule.limits.perMember) continue;
    const points = earnedPoints(rule.points, occasion.paid, multiplier);
    const isPending = times.activatesAt !== null;
    // Past 2^53-1 the grant is skipped (the ledger function would refuse it and abort the reaction).
    if (points <= 0 || (isPending ? pending + points > MAX : balance + points > MAX || lifetime + points > MAX)) continue;
    const granted = await earnPoints(tx, workspaceId, card.id, {
      points,
      activatesAt: times.activatesAt,
      expiresAt: times.expiresAt,
      source: occasion.source,
      orderId: occasion.orderId,
      ruleId: rule.id,
      reactionKey: occasion.reactionKey,
    });
    await recordEarningMultiplier(tx, workspaceId, rule.id, occasion.reactionKey, multiplier);
    if (granted.pending) pending += points;
    else {
      balance += points;
      lifetime += points;
    }
    emit('loyalty.points.earned', {
      memberId: card.id,
      programId: program.id,
      customerId,
      points,
      pending: granted.pending,
      earningRuleId: rule.id,
      ...(occasion.orderId ? { orderId: occasion.orderId } : {}),
      entryId: granted.entryId,
      balance: granted.balanceAfter,
    });
    effects.push({ type: 'POINTS_EARNED', memberId: card.id, programId: program.id, earningRuleId: rule.id, points, pending: granted.pending });
  }
  if (effects.some((e) => !e.pending)) await placeMember(work, workspaceId, card.id);
  return effects;
}

async function earnByRules(work: LoyaltyWork, workspaceId: string, rules: RuleWithProgram[], customerId: string, occasion: Occasion): Promise<EarningEffect[]> {
  if (rules.length === 0) return [];
  const customer = await loadCustomerFacts(work.tx, workspaceId, { id: customerId });
  // A customer deleted since the event was recorded earns nothing (and is not made a member).
  if (!customer) return [];
  const facts: RuleFacts = { order: occasion.order, customer };
  const byProgram = new Map<string, RuleWithProgram[]>();
  for (const rule of rules) byProgram.set(rule.programId, [...(byProgram.get(rule.programId) ?? []), rule]);
  const effects: EarningEffect[] = [];
  for (const programRules of byProgram.values()) effects.push(...(await earnInProgram(work, workspaceId, programRules, customerId, occasion, facts)));
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
