// The rules domain's public surface: condition trees and schedules (pure), validation rules (contract, handlers and
// the existence check campaigns, vouchers and tiers use).
import { invalidField, type ProblemError } from '../../contract/problems.js';
import type { Sql } from '../../platform/database.js';
import { findMissingValidationRules } from './validation-rule.queries.js';

export { validationRuleContract } from './validation-rule.contract.js';
export { validationRuleHandlers } from './validation-rule.handlers.js';
export { ValidationRule } from './validation-rule.schemas.js';
export { evaluateConditions, itemMatches, timeFacts, type ConditionResult, type CustomerFacts, type RuleFacts } from '../../checkout/condition.rules.js';
export { ApplicableTo, ConditionTree, CUSTOMER_FIELDS, type ConditionLeaf } from '../../contract/condition.schemas.js';
export { withinSchedule } from '../../checkout/schedule.rules.js';
export { Schedule } from '../../contract/schedule.schemas.js';

/** The channel a rule or time-zone change is announced on (payload: the workspace id), by triggers at commit. */
export const RULES_CHANNEL = 'rules_changed';

/** The 400 for `validationRuleIds` naming rules missing from the workspace, or undefined when all exist. */
export async function unknownValidationRules(db: Sql, workspaceId: string, ids: readonly string[] | null | undefined): Promise<ProblemError | undefined> {
  if (!ids?.length) return undefined;
  const missing = await findMissingValidationRules(db, workspaceId, ids);
  return missing.length ? invalidField('body.validationRuleIds', `no validation rule in this workspace with id ${missing.join(', ')}`) : undefined;
}
