// The rules domain's public surface: condition trees and schedules (pure), validation rules (contract, handlers and
// the existence check campaigns, vouchers and tiers use).
import type { Sql } from '../../platform/database.js';
import { findMissingValidationRules, type ValidationRuleSnapshot } from './validation-rule.queries.js';

export { validationRuleContract } from './validation-rule.contract.js';
export { validationRuleHandlers } from './validation-rule.handlers.js';
export { ValidationRule } from './validation-rule.schemas.js';
export { evaluateConditions, itemMatches, timeFacts, type ConditionResult, type CustomerFacts, type RuleFacts } from './condition.rules.js';
export { ApplicableTo, ConditionTree, CUSTOMER_FIELDS, type ConditionLeaf } from './condition.schemas.js';
export { withinSchedule } from './schedule.rules.js';
export { Schedule } from './schedule.schemas.js';
export type { ValidationRuleSnapshot };

/** The ids that name no rule of the workspace (lower case, each once): a 400 for the caller to raise. */
export async function missingValidationRules(db: Sql, workspaceId: string, ids: readonly string[]): Promise<string[]> {
  return findMissingValidationRules(db, workspaceId, ids);
}

/** The channel a rule or time-zone change is announced on (payload: the workspace id), by triggers at commit. */
export const RULES_CHANNEL = 'rules_changed';
