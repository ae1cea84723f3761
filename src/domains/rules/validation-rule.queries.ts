// SQL of validation rules: parameterized, explicit columns, one row mapper; every statement is scoped to a workspace.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage } from '../../platform/pagination.js';
import { presentFields } from '../../platform/partial-update.js';
import type { ApplicableTo, ConditionTree } from '../../contract/condition.schemas.js';
import type { CreateValidationRuleBody, ListValidationRulesQuery, UpdateValidationRuleBody, ValidationRule } from './validation-rule.schemas.js';

const COLUMNS = 'id, name, conditions, error_message, applicable_to, created_at, updated_at';

interface ValidationRuleRow {
  [column: string]: unknown;
  id: string;
  name: string;
  conditions: ConditionTree;
  error_message: string | null;
  applicable_to: ApplicableTo | null;
  created_at: Date;
  updated_at: Date;
}

function toValidationRule(row: ValidationRuleRow): ValidationRule {
  return {
    id: row.id,
    name: row.name,
    conditions: row.conditions,
    ...(row.error_message !== null ? { errorMessage: row.error_message } : {}),
    ...(row.applicable_to !== null ? { applicableTo: row.applicable_to } : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function insertValidationRule(db: Sql, workspaceId: string, fields: CreateValidationRuleBody): Promise<ValidationRule> {
  const { rows } = await db.query<ValidationRuleRow>(
    `INSERT INTO validation_rules (workspace_id, name, conditions, error_message, applicable_to)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [workspaceId, fields.name, JSON.stringify(fields.conditions), fields.errorMessage ?? null, fields.applicableTo ? JSON.stringify(fields.applicableTo) : null],
  );
  return toValidationRule(rows[0]!);
}

export async function findValidationRule(db: Sql, workspaceId: string, id: string): Promise<ValidationRule | undefined> {
  const { rows } = await db.query<ValidationRuleRow>(`SELECT ${COLUMNS} FROM validation_rules WHERE workspace_id = $1 AND id = $2`, [
    workspaceId,
    id,
  ]);
  return rows[0] && toValidationRule(rows[0]);
}

/** The rule as it is before a change, locked until the caller's transaction ends (its audit entry's `before`). */
export async function lockValidationRule(tx: Sql, workspaceId: string, id: string): Promise<ValidationRule | undefined> {
  const { rows } = await tx.query<ValidationRuleRow>(
    `SELECT ${COLUMNS} FROM validation_rules WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE`,
    [workspaceId, id],
  );
  return rows[0] && toValidationRule(rows[0]);
}

export function listValidationRules(db: Sql, cursors: CursorCodec, workspaceId: string, request: ListValidationRulesQuery) {
  return keysetPage<ValidationRuleRow, ValidationRule>(
    db,
    cursors,
    { list: 'validationRules.list', from: 'validation_rules', columns: COLUMNS, where: ['workspace_id = $1'], params: [workspaceId], map: toValidationRule },
    request,
  );
}

/** Sets the fields present in the patch ($3 names them): `null` clears, a field left out is kept. */
export async function updateValidationRule(
  db: Sql,
  workspaceId: string,
  id: string,
  patch: UpdateValidationRuleBody,
): Promise<ValidationRule | undefined> {
  const { rows } = await db.query<ValidationRuleRow>(
    `UPDATE validation_rules SET
       name = CASE WHEN 'name' = ANY($3) THEN $4::text ELSE name END,
       conditions = CASE WHEN 'conditions' = ANY($3) THEN $5::jsonb ELSE conditions END,
       error_message = CASE WHEN 'errorMessage' = ANY($3) THEN $6::text ELSE error_message END,
       applicable_to = CASE WHEN 'applicableTo' = ANY($3) THEN $7::jsonb ELSE applicable_to END,
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [
      workspaceId,
      id,
      presentFields(patch),
      patch.name ?? null,
      patch.conditions ? JSON.stringify(patch.conditions) : null,
      patch.errorMessage ?? null,
      patch.applicableTo ? JSON.stringify(patch.applicableTo) : null,
    ],
  );
  return rows[0] && toValidationRule(rows[0]);
}

export interface RuleUser {
  kind: 'campaign' | 'voucher';
  id: string;
  name: string;
}

/**
 * Campaigns and vouchers (codes and tiers) that list the rule in validation_rule_ids; at most `limit`. The vouchers'
 * condition repeats the predicate of their partial index (schema/0035), so the planner can use it.
 */
export async function findValidationRuleUsers(db: Sql, workspaceId: string, id: string, limit = 20): Promise<RuleUser[]> {
  const { rows } = await db.query<RuleUser & { [column: string]: unknown }>(
    `(SELECT 'campaign' AS kind, id, name FROM campaigns WHERE workspace_id = $1 AND validation_rule_ids @> ARRAY[$2::uuid] LIMIT $3)
     UNION ALL
     (SELECT 'voucher' AS kind, id, code AS name FROM vouchers
       WHERE workspace_id = $1 AND validation_rule_ids <> '{}' AND validation_rule_ids @> ARRAY[$2::uuid] LIMIT $3)`,
    [workspaceId, id, limit],
  );
  return rows;
}

/** Deletes the rule unless a campaign or voucher lists it, checked in the same statement: `used` then. */
export async function deleteValidationRule(db: Sql, workspaceId: string, id: string): Promise<'deleted' | 'used' | 'missing'> {
  const { rows } = await db.query<{ deleted: number; used: boolean }>(
    `WITH users AS (
       SELECT 1 FROM campaigns WHERE workspace_id = $1 AND validation_rule_ids @> ARRAY[$2::uuid]
       UNION ALL
       SELECT 1 FROM vouchers WHERE workspace_id = $1 AND validation_rule_ids <> '{}' AND validation_rule_ids @> ARRAY[$2::uuid]
     ), deleted AS (
       DELETE FROM validation_rules WHERE workspace_id = $1 AND id = $2 AND NOT EXISTS (SELECT 1 FROM users) RETURNING 1
     )
     SELECT (SELECT count(*)::int FROM deleted) AS deleted, EXISTS (SELECT 1 FROM users) AS used`,
    [workspaceId, id],
  );
  const row = rows[0]!;
  if (row.deleted > 0) return 'deleted';
  return row.used ? 'used' : 'missing';
}

/** The ids (lower case, each once) that name no rule of the workspace. */
export async function findMissingValidationRules(db: Sql, workspaceId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT given.id::text AS id FROM unnest($2::uuid[]) AS given(id)
     WHERE NOT EXISTS (SELECT 1 FROM validation_rules r WHERE r.workspace_id = $1 AND r.id = given.id)`,
    [workspaceId, [...new Set(ids.map((id) => id.toLowerCase()))]],
  );
  return rows.map((r) => r.id);
}
