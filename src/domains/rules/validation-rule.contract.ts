// Validation rule operations.
import { z } from 'zod';
import { listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import {
  CreateValidationRuleBody,
  EvaluateValidationRuleBody,
  ListValidationRulesQuery,
  RuleEvaluation,
  UpdateValidationRuleBody,
  ValidationRule,
} from './validation-rule.schemas.js';

const tags = ['Validation rules'];
const params = z.object({ id: Uuid });

export const validationRuleContract = {
  createValidationRule: defineOperation({
    name: 'validationRules.create',
    method: 'post',
    path: '/validation-rules',
    scope: 'rules:write',
    summary: 'Create a validation rule',
    description:
      'A condition tree over order.*, customer.* and time.* fields; campaigns and vouchers name it in `validationRuleIds`. ' +
      '`applicableTo` restricts the order.items.* fields to the listed products or SKUs.',
    tags,
    body: CreateValidationRuleBody,
    output: ValidationRule,
    successStatus: 201,
  }),
  getValidationRule: defineOperation({
    name: 'validationRules.get',
    method: 'get',
    path: '/validation-rules/{id}',
    scope: 'rules:read',
    summary: 'Get a validation rule',
    tags,
    params,
    output: ValidationRule,
  }),
  listValidationRules: defineOperation({
    name: 'validationRules.list',
    method: 'get',
    path: '/validation-rules',
    scope: 'rules:read',
    summary: 'List validation rules, newest first',
    tags,
    query: ListValidationRulesQuery,
    output: listEnvelope(ValidationRule, 'ValidationRuleList'),
  }),
  updateValidationRule: defineOperation({
    name: 'validationRules.update',
    method: 'patch',
    path: '/validation-rules/{id}',
    scope: 'rules:write',
    summary: 'Update a validation rule',
    description: 'Fields left out are kept; `null` clears errorMessage or applicableTo. The next decision uses the new rule.',
    tags,
    params,
    body: UpdateValidationRuleBody,
    output: ValidationRule,
  }),
  deleteValidationRule: defineOperation({
    name: 'validationRules.delete',
    method: 'delete',
    path: '/validation-rules/{id}',
    scope: 'rules:write',
    summary: 'Delete a validation rule',
    description: 'A rule that a campaign or voucher still lists is a 409 `conflict` naming them.',
    tags,
    params,
  }),
  evaluateValidationRule: defineOperation({
    name: 'validationRules.evaluate',
    effect: 'read',
    method: 'post',
    path: '/validation-rules/{id}/evaluate',
    scope: 'rules:read',
    summary: 'Test a validation rule against given facts',
    description: 'Records nothing. Answers whether the rule holds and, when not, the path and leaf of the condition that failed.',
    tags,
    params,
    body: EvaluateValidationRuleBody,
    output: RuleEvaluation,
  }),
};
