// The rules domain's public surface: validation rules (contract, handlers and the existence check campaigns,
// vouchers and tiers use). Condition trees and schedules are vocabulary: src/contract and src/checkout.
import { invalidField, type ProblemError } from '../../contract/problems.js';
import type { Sql } from '../../platform/database.js';
import { findMissingValidationRules } from './validation-rule.queries.js';

export { validationRuleContract } from './validation-rule.contract.js';
export { validationRuleHandlers } from './validation-rule.handlers.js';
export { ValidationRule } from './validation-rule.schemas.js';

/** The channel a rule or time-zone change is announced on (payload: the workspace id), by triggers at commit. */
export const RULES_CHANNEL = 'rules_changed';

/** The 400 for `validationRuleIds` naming rules missing from the workspace, or undefined when all exist. */
export async function unknownValidationRules(db: Sql, workspaceId: string, ids: readonly string[] | null | undefined): Promise<ProblemError | undefined> {
  if (!ids?.length) return undefined;
  const missing = await findMissingValidationRules(db, workspaceId, ids);
  return missing.length ? invalidField('body.validationRuleIds', `no validation rule in this workspace with id ${missing.join(', ')}`) : undefined;
}
