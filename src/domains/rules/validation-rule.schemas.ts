// Validation rule resources: a named condition tree with an optional error message and item restriction.
import { z } from 'zod';
import { ListQuery, Metadata, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { Order } from '../../contract/checkout.schemas.js';
import { ApplicableTo, ConditionTree } from '../../contract/condition.schemas.js';

const ErrorMessage = z.string().trim().min(1).max(500).meta({ description: 'Shown to the customer when the rule does not hold.' });

export const ValidationRule = z
  .object({
    id: Uuid,
    name: z.string().trim().min(1).max(200),
    conditions: ConditionTree,
    errorMessage: ErrorMessage.optional(),
    applicableTo: ApplicableTo.optional(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'ValidationRule', description: 'A reusable condition tree that campaigns and vouchers name in validationRuleIds.' });
export type ValidationRule = z.infer<typeof ValidationRule>;

export const CreateValidationRuleBody = ValidationRule.pick({ name: true, conditions: true, errorMessage: true, applicableTo: true });
export type CreateValidationRuleBody = z.infer<typeof CreateValidationRuleBody>;

/** Fields left out stay as they are; `null` clears errorMessage or applicableTo. */
export const UpdateValidationRuleBody = ValidationRule.pick({ name: true, conditions: true })
  .partial()
  .extend({ errorMessage: ErrorMessage.nullable().optional(), applicableTo: ApplicableTo.nullable().optional() });
export type UpdateValidationRuleBody = z.infer<typeof UpdateValidationRuleBody>;

export const ListValidationRulesQuery = ListQuery;
export type ListValidationRulesQuery = z.infer<typeof ListValidationRulesQuery>;

export const EvaluateValidationRuleBody = z.object({
  order: Order.optional(),
  customer: z
    .strictObject({
      id: Uuid.optional(),
      sourceId: z.string().max(200).optional(),
      email: z.string().max(320).optional(),
      name: z.string().max(200).optional(),
      createdAt: Timestamp.optional(),
      segments: z.array(Uuid).max(1000).optional(),
      metadata: Metadata.optional(),
      redemptions: z.number().int().min(0).optional(),
    })
    .optional()
    .meta({ description: 'The customer facts to test with; fields left out are missing.' }),
  time: z
    .strictObject({ dayOfWeek: z.number().int().min(0).max(6), hour: z.number().int().min(0).max(23) })
    .optional()
    .meta({ description: 'Local day of week (0 = Sunday) and hour; time.* fields are missing when left out.' }),
});
export type EvaluateValidationRuleBody = z.infer<typeof EvaluateValidationRuleBody>;

export const RuleEvaluation = z
  .object({
    ok: z.boolean(),
    path: z.string().optional().meta({ description: "JSON pointer of the failing node in conditions ('' is the root)." }),
    leaf: ConditionTree.optional().meta({ description: 'The leaf that failed (for a failing `not`, the first leaf under it).' }),
  })
  .meta({ id: 'RuleEvaluation' });
export type RuleEvaluation = z.infer<typeof RuleEvaluation>;
