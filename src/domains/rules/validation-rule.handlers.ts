// Validation rule handlers; a change or deletion tells the engine, whose next decision reads the rules again.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { evaluateConditions, type CustomerFacts } from './condition.rules.js';
import { validationRuleContract } from './validation-rule.contract.js';
import {
  deleteValidationRule,
  findValidationRule,
  findValidationRuleUsers,
  insertValidationRule,
  listValidationRules,
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
  async createValidationRule({ input, auth, deps }) {
    const { name, conditions, errorMessage, applicableTo } = input;
    return insertValidationRule(deps.db, auth.workspaceId, { name, conditions, errorMessage, applicableTo });
  },
  async getValidationRule({ input, auth, deps }) {
    const rule = await findValidationRule(deps.db, auth.workspaceId, input.id);
    if (!rule) throw notFound();
    return rule;
  },
  async listValidationRules({ input, auth, deps }) {
    return listValidationRules(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async updateValidationRule({ input, auth, deps }) {
    const { id, ...patch } = input;
    const rule = await updateValidationRule(deps.db, auth.workspaceId, id, patch);
    if (!rule) throw notFound();
    await deps.engine.rulesChanged(auth.workspaceId);
    return rule;
  },
  async deleteValidationRule({ input, auth, deps }) {
    const result = await deleteValidationRule(deps.db, auth.workspaceId, input.id);
    if (result === 'missing') throw notFound();
    if (result === 'used') throw problem('conflict', describeUsers(await findValidationRuleUsers(deps.db, auth.workspaceId, input.id)));
    await deps.engine.rulesChanged(auth.workspaceId);
  },
  async evaluateValidationRule({ input, auth, deps }) {
    const rule = await findValidationRule(deps.db, auth.workspaceId, input.id);
    if (!rule) throw notFound();
    const result = evaluateConditions(rule.conditions, { order: input.order, customer: customerFacts(input.customer), time: input.time }, rule.applicableTo);
    return result.ok ? { ok: true } : { ok: false, path: result.path, leaf: result.leaf };
  },
});
