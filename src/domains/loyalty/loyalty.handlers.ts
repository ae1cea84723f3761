// Loyalty handlers: reads through the queries; each change in its operation's unit of work (points changes through
// the ledger functions, under the card's row lock, with their idempotency keys).
import { implement } from '../../contract/handler.js';
import { invalidField, problem } from '../../contract/problems.js';
import { sqlState, UNIQUE_VIOLATION, type Sql } from '../../platform/database.js';
import type { KeyedQueue } from '../../platform/keyed-queue.js';
import { requireCustomer } from '../customers/index.js';
import { unknownValidationRules } from '../rules/index.js';
import { checkTriggerFields, type EarningRule } from './earning-rule.schemas.js';
import { loyaltyContract } from './loyalty.contract.js';
import { findCustomerMembers, findMember, listMembers } from './member.queries.js';
import { joinProgram, placeProgramMembers } from './member.service.js';
import { listEntries } from './points-ledger.queries.js';
import { adjustMemberPoints, transferMemberPoints } from './points.service.js';
import {
  deleteEarningRule,
  deleteTier,
  findEarningRule,
  findTier,
  insertEarningRule,
  insertTier,
  listEarningRules,
  listTiers,
  customerExists,
  lockProgram,
  programExists,
  segmentExists,
  updateEarningRule,
  updateTier,
} from './program.queries.js';

const programNotFound = () => problem('not_found', 'no such loyalty program');
const memberNotFound = () => problem('not_found', 'no such loyalty member');
const ruleNotFound = () => problem('not_found', 'no such earning rule');
const tierNotFound = () => problem('not_found', 'no such tier');

async function requireProgram(db: Sql, workspaceId: string, id: string, options: { lock?: boolean } = {}): Promise<void> {
  const found = options.lock ? await lockProgram(db, workspaceId, id) : await programExists(db, workspaceId, id);
  if (!found) throw programNotFound();
}

async function requireSegment(db: Sql, workspaceId: string, segmentId: string | null | undefined): Promise<void> {
  if (!segmentId) return;
  if (!(await segmentExists(db, workspaceId, segmentId))) throw invalidField('body.segmentId', 'no segment in this workspace with this id');
}

function tierConflict(error: unknown): never {
  if (sqlState(error) === UNIQUE_VIOLATION) throw problem('conflict', 'the program has a tier with this minPoints');
  throw error;
}

/**
 * Points writes of one card take turns in this process (ServiceDeps.rowTurns) before they take its row lock: racing
 * spends of a hot card wait here, not each on a pool connection. A transfer waits for both cards' turns, in key order
 * (as the row locks are taken), so two transfers the other way round never wait on each other.
 */
function inCardTurns<T>(turns: KeyedQueue, memberIds: readonly string[], work: () => Promise<T>): Promise<T> {
  const keys = [...new Set(memberIds.map((id) => `loyalty_member:${id.toLowerCase()}`))].sort();
  return keys.reduceRight<() => Promise<T>>((inner, key) => () => turns.run(key, inner), work)();
}

export const loyaltyHandlers = implement(loyaltyContract, {
  async createMember({ input, actor, mutate }) {
    return mutate(async (unit) => {
      await requireProgram(unit.tx, actor.workspaceId, input.id);
      const customerId = await requireCustomer(unit.tx, actor.workspaceId, input.customer);
      const { member } = await joinProgram(unit, actor.workspaceId, { programId: input.id, customerId, code: input.code, metadata: input.metadata }, 'conflict');
      unit.record({ resourceType: 'loyalty_member', resourceId: member.id, after: member });
      return member;
    });
  },
  async listMembers({ input, actor, deps }) {
    await requireProgram(deps.db, actor.workspaceId, input.id);
    const { id, ...page } = input;
    return listMembers(deps.db, deps.cursors, actor.workspaceId, id, page);
  },
  async getMember({ input, actor, deps }) {
    const member = await findMember(deps.db, actor.workspaceId, input.id);
    if (!member) throw memberNotFound();
    return member;
  },
  async getCustomerLoyalty({ input, actor, deps }) {
    if (!(await customerExists(deps.db, actor.workspaceId, input.id))) throw problem('not_found', 'no such customer');
    return { data: await findCustomerMembers(deps.db, actor.workspaceId, input.id) };
  },
  async adjustPoints({ input, actor, mutate, deps }) {
    const { id, ...body } = input;
    return inCardTurns(deps.rowTurns, [id], () => mutate((unit) => adjustMemberPoints(unit, actor.workspaceId, id, body)));
  },
  async transferPoints({ input, actor, mutate, deps }) {
    const { id, ...body } = input;
    return inCardTurns(deps.rowTurns, [id, body.toMemberId], () => mutate((unit) => transferMemberPoints(unit, actor.workspaceId, id, body)));
  },
  async listTransactions({ input, actor, deps }) {
    if (!(await findMember(deps.db, actor.workspaceId, input.id))) throw memberNotFound();
    const { id, ...page } = input;
    return listEntries(deps.db, deps.cursors, actor.workspaceId, id, page);
  },
  async createEarningRule({ input, actor, mutate }) {
    const { id, ...body } = input;
    return mutate(async ({ tx, record }) => {
      await requireProgram(tx, actor.workspaceId, id);
      await requireSegment(tx, actor.workspaceId, body.segmentId);
      const refusal = await unknownValidationRules(tx, actor.workspaceId, body.validationRuleIds);
      if (refusal) throw refusal;
      const rule = await insertEarningRule(tx, actor.workspaceId, id, body);
      record({ resourceType: 'earning_rule', resourceId: rule.id, after: rule });
      return rule;
    });
  },
  async listEarningRules({ input, actor, deps }) {
    await requireProgram(deps.db, actor.workspaceId, input.id);
    const { id, ...page } = input;
    return listEarningRules(deps.db, deps.cursors, actor.workspaceId, id, page);
  },
  async getEarningRule({ input, actor, deps }) {
    const rule = await findEarningRule(deps.db, actor.workspaceId, input.id);
    if (!rule) throw ruleNotFound();
    return rule;
  },
  async updateEarningRule({ input, actor, mutate }) {
    const { id, ...patch } = input;
    return mutate(async ({ tx, record }) => {
      const before = await findEarningRule(tx, actor.workspaceId, id, { lock: true });
      if (!before) throw ruleNotFound();
      const merged: EarningRule = { ...before, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) };
      const issues: string[] = [];
      checkTriggerFields(merged, { addIssue: (issue: { message?: string; path?: PropertyKey[] }) => void issues.push(`${String(issue.path?.[0])}: ${issue.message}`) } as never);
      if (issues.length) throw invalidField('body', issues.join('; '));
      await requireSegment(tx, actor.workspaceId, patch.segmentId);
      const refusal = await unknownValidationRules(tx, actor.workspaceId, patch.validationRuleIds);
      if (refusal) throw refusal;
      const rule = await updateEarningRule(tx, actor.workspaceId, id, before, patch);
      record({ resourceType: 'earning_rule', resourceId: id, before, after: rule });
      return rule;
    });
  },
  async deleteEarningRule({ input, actor, mutate }) {
    await mutate(async ({ tx, record }) => {
      const before = await deleteEarningRule(tx, actor.workspaceId, input.id);
      if (!before) throw ruleNotFound();
      record({ resourceType: 'earning_rule', resourceId: input.id, before });
    });
  },
  async createTier({ input, actor, mutate }) {
    const { id, ...body } = input;
    return mutate(async (unit) => {
      await requireProgram(unit.tx, actor.workspaceId, id, { lock: true });
      const tier = await insertTier(unit.tx, actor.workspaceId, id, body).catch(tierConflict);
      const moved = await placeProgramMembers(unit, actor.workspaceId, id);
      unit.record({ resourceType: 'loyalty_tier', resourceId: tier.id, after: { ...tier, membersMoved: moved } });
      return tier;
    });
  },
  async listTiers({ input, actor, deps }) {
    await requireProgram(deps.db, actor.workspaceId, input.id);
    return { data: await listTiers(deps.db, actor.workspaceId, input.id) };
  },
  async updateTier({ input, actor, mutate }) {
    const { id, tierId, ...patch } = input;
    return mutate(async (unit) => {
      await requireProgram(unit.tx, actor.workspaceId, id, { lock: true });
      const before = await findTier(unit.tx, actor.workspaceId, id, tierId);
      if (!before) throw tierNotFound();
      const tier = await updateTier(unit.tx, actor.workspaceId, tierId, {
        name: patch.name ?? before.name,
        minPoints: patch.minPoints ?? before.minPoints,
        multiplier: patch.multiplier ?? before.multiplier,
      }).catch(tierConflict);
      const moved = await placeProgramMembers(unit, actor.workspaceId, id);
      unit.record({ resourceType: 'loyalty_tier', resourceId: tierId, before, after: { ...tier, membersMoved: moved } });
      return tier;
    });
  },
  async deleteTier({ input, actor, mutate }) {
    await mutate(async (unit) => {
      await requireProgram(unit.tx, actor.workspaceId, input.id, { lock: true });
      const before = await findTier(unit.tx, actor.workspaceId, input.id, input.tierId);
      if (!before) throw tierNotFound();
      await placeProgramMembers(unit, actor.workspaceId, input.id, input.tierId);
      await deleteTier(unit.tx, actor.workspaceId, input.tierId);
      unit.record({ resourceType: 'loyalty_tier', resourceId: input.tierId, before });
    });
  },
});
