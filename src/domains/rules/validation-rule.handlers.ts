// Validation rule handlers: each write is one unit of work (change, audit entry and event commit together); a change
// or deletion then tells the engine, whose next decision reads the rules again.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { evaluateConditions, type CustomerFacts } from '../../checkout/condition.rules.js';
import { validationRuleContract } from './validation-rule.contract.js';
import {
  deleteValidationRule,
  findValidationRule,
  findValidationRuleUsers,
  insertValidationRule,
  listValidationRules,
  lockValidationRule,
  updateValidationRule,
  type RuleUser,
} from './validation-rule.queries.js';
import type { EvaluateValidationRuleBody } from './validation-rule.schemas.js';

const notFound = () => problem('not_found', 'no such validation rule');

function describeUsers(users: RuleUser[]): string {
  const named = users.map((u) => (u.kind === 'campaign' ? `campaign ${JSON.stringify(u.name)} (${u.id})` : `voucher ${u.name}`));
  return `the validation rule is used by ${named.join(', ')}${users.length >= 20 ? ' and maybe more' : ''}: remove it from their validationRuleIds first`;
}

function customerFacts(customer: EvaluateValidationRuleBody['customer']): CustomerFacts | undefined {
  if (!customer) return undefined;
  return {
    id: customer.id ?? null,
    sourceId: customer.sourceId ?? null,
    email: customer.email ?? null,
    name: customer.name ?? null,
    createdAt: customer.createdAt ?? null,
    segments: customer.segments ?? [],
    metadata: customer.metadata ?? {},
    ...(customer.redemptions !== undefined ? { redemptions: customer.redemptions } : {}),
  };
}

export const validationRuleHandlers = implement(validationRuleContract, {
  async createValidationRule({ input, actor, mutate }) {
    const { name, conditions, errorMessage, applicableTo } = input;
    return mutate(async ({ tx, record, emit }) => {
      const rule = await insertValidationRule(tx, actor.workspaceId, { name, conditions, errorMessage, applicableTo });
      record({ resourceType: 'validation_rule', resourceId: rule.id, after: rule });
      emit('validation_rule.created', { validationRuleId: rule.id, validationRule: rule });
      return rule;
    });
  },
  async getValidationRule({ input, actor, deps }) {
    const rule = await findValidationRule(deps.db, actor.workspaceId, input.id);
    if (!rule) throw notFound();
    return rule;
  },
  async listValidationRules({ input, actor, deps }) {
    return listValidationRules(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async updateValidationRule({ input, actor, deps, mutate }) {
    const { id, ...patch } = input;
    const rule = await mutate(async ({ tx, record, emit }) => {
      const before = await lockValidationRule(tx, actor.workspaceId, id);
      if (!before) throw notFound();
      const after = await updateValidationRule(tx, actor.workspaceId, id, patch);
      if (!after) throw notFound();
      record({ resourceType: 'validation_rule', resourceId: id, before, after });
      emit('validation_rule.updated', { validationRuleId: id, validationRule: after });
      return after;
    });
    await deps.engine.rulesChanged(actor.workspaceId);
    return rule;
  },
  async deleteValidationRule({ input, actor, deps, mutate }) {
    await mutate(async ({ tx, record, emit }) => {
      const before = await lockValidationRule(tx, actor.workspaceId, input.id);
      if (!before) throw notFound();
      const result = await deleteValidationRule(tx, actor.workspaceId, input.id);
      if (result === 'missing') throw notFound();
      if (result === 'used') throw problem('conflict', describeUsers(await findValidationRuleUsers(tx, actor.workspaceId, input.id)));
      record({ resourceType: 'validation_rule', resourceId: input.id, before });
      emit('validation_rule.deleted', { validationRuleId: input.id });
    });
    await deps.engine.rulesChanged(actor.workspaceId);
  },
  async evaluateValidationRule({ input, actor, deps }) {
    const rule = await findValidationRule(deps.db, actor.workspaceId, input.id);
    if (!rule) throw notFound();
    const result = evaluateConditions(rule.conditions, { order: input.order, customer: customerFacts(input.customer), time: input.time }, rule.applicableTo);
    return result.ok ? { ok: true } : { ok: false, path: result.path, leaf: result.leaf };
  },
});
