// SQL of a program's earning rules and tiers: parameterized, explicit columns, one mapper per row type, every
// statement scoped to a workspace.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage } from '../../platform/pagination.js';
import type { CreateEarningRuleBody, EarningPoints, EarningRule, EarningTrigger, Tier, UpdateEarningRuleBody } from './earning-rule.schemas.js';
import type { PageQuery } from './member.schemas.js';

const RULE_COLUMNS = 'id, program_id, name, active, trigger, segment_id, event_name, points, validation_rule_ids, limits, created_at, updated_at';

interface RuleRow {
  [column: string]: unknown;
  id: string;
  program_id: string;
  name: string;
  active: boolean;
  trigger: EarningTrigger;
  segment_id: string | null;
  event_name: string | null;
  points: EarningPoints;
  validation_rule_ids: string[];
  limits: EarningRule['limits'];
  created_at: Date;
  updated_at: Date;
}

function toRule(row: RuleRow): EarningRule {
  return {
    id: row.id,
    programId: row.program_id,
    name: row.name,
    active: row.active,
    trigger: row.trigger,
    segmentId: row.segment_id,
    eventName: row.event_name,
    points: row.points,
    validationRuleIds: row.validation_rule_ids,
    limits: row.limits,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function insertEarningRule(tx: Sql, workspaceId: string, programId: string, body: CreateEarningRuleBody): Promise<EarningRule> {
  const { rows } = await tx.query<RuleRow>(
    `INSERT INTO loyalty_earning_rules (workspace_id, program_id, name, active, trigger, segment_id, event_name, points, validation_rule_ids, limits)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${RULE_COLUMNS}`,
    [workspaceId, programId, body.name, body.active, body.trigger, body.segmentId ?? null, body.eventName ?? null, body.points, body.validationRuleIds, body.limits ?? null],
  );
  return toRule(rows[0]!);
}

export async function findEarningRule(db: Sql, workspaceId: string, id: string, options: { lock?: boolean } = {}): Promise<EarningRule | undefined> {
  const { rows } = await db.query<RuleRow>(
    `SELECT ${RULE_COLUMNS} FROM loyalty_earning_rules WHERE workspace_id = $1 AND id = $2${options.lock ? ' FOR UPDATE' : ''}`,
    [workspaceId, id],
  );
  return rows[0] && toRule(rows[0]);
}

export async function updateEarningRule(tx: Sql, workspaceId: string, id: string, merged: EarningRule, patch: UpdateEarningRuleBody): Promise<EarningRule> {
  const { rows } = await tx.query<RuleRow>(
    `UPDATE loyalty_earning_rules SET name = $3, active = $4, segment_id = $5, event_name = $6, points = $7, validation_rule_ids = $8,
       limits = $9, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${RULE_COLUMNS}`,
    [
      workspaceId,
      id,
      patch.name ?? merged.name,
      patch.active ?? merged.active,
      patch.segmentId ?? merged.segmentId,
      patch.eventName ?? merged.eventName,
      patch.points ?? merged.points,
      patch.validationRuleIds ?? merged.validationRuleIds,
      patch.limits === undefined ? merged.limits : patch.limits,
    ],
  );
  return toRule(rows[0]!);
}

export async function deleteEarningRule(tx: Sql, workspaceId: string, id: string): Promise<EarningRule | undefined> {
  const { rows } = await tx.query<RuleRow>(`DELETE FROM loyalty_earning_rules WHERE workspace_id = $1 AND id = $2 RETURNING ${RULE_COLUMNS}`, [workspaceId, id]);
  return rows[0] && toRule(rows[0]);
}

export function listEarningRules(db: Sql, cursors: CursorCodec, workspaceId: string, programId: string, page: PageQuery) {
  return keysetPage<RuleRow, EarningRule>(
    db,
    cursors,
    {
      list: `loyalty.listEarningRules:${programId}`,
      from: 'loyalty_earning_rules',
      columns: RULE_COLUMNS,
      where: ['workspace_id = $1', 'program_id = $2'],
      params: [workspaceId, programId],
      map: toRule,
    },
    page,
  );
}

/** The active rules of a trigger in the workspace's active loyalty programs, with their program's settings. */
export async function findActiveRules(
  db: Sql,
  workspaceId: string,
  trigger: EarningTrigger,
  match: { segmentId?: string; eventName?: string } = {},
): Promise<Array<EarningRule & { program: ProgramSettingsRow }>> {
  const { rows } = await db.query<RuleRow & { program_loyalty: ProgramSettingsRow['loyalty'] }>(
    `SELECT ${RULE_COLUMNS.split(', ').map((c) => 'r.' + c).join(', ')}, c.loyalty AS program_loyalty
       FROM loyalty_earning_rules r JOIN campaigns c ON c.id = r.program_id
      WHERE r.workspace_id = $1 AND r.active AND r.trigger = $2 AND c.type = 'LOYALTY_PROGRAM' AND c.active
        AND (c.start_date IS NULL OR c.start_date <= now()) AND (c.expiration_date IS NULL OR c.expiration_date > now())
        AND ($3::uuid IS NULL OR r.segment_id = $3) AND ($4::text IS NULL OR r.event_name = $4)
      ORDER BY r.created_at, r.id`,
    [workspaceId, trigger, match.segmentId ?? null, match.eventName ?? null],
  );
  return rows.map((row) => ({ ...toRule(row), program: { id: row.program_id, loyalty: row.program_loyalty ?? {} } }));
}

export interface ProgramSettingsRow {
  id: string;
  loyalty: {
    autoJoin?: boolean;
    pending?: { days: number };
    expiration?: { type: 'NONE' | 'ROLLING' | 'FIXED_DATE'; days?: number; date?: string; notifyDaysBefore?: number };
    reversal?: { earned: 'TO_ZERO' | 'ALLOW_NEGATIVE' };
  };
}

// Tiers.

const TIER_COLUMNS = 'id, program_id, name, min_points, multiplier::float8 AS multiplier, created_at, updated_at';

interface TierRow {
  [column: string]: unknown;
  id: string;
  program_id: string;
  name: string;
  min_points: number;
  multiplier: number;
  created_at: Date;
  updated_at: Date;
}

function toTier(row: TierRow): Tier {
  return {
    id: row.id,
    programId: row.program_id,
    name: row.name,
    minPoints: row.min_points,
    multiplier: row.multiplier,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Throws UNIQUE_VIOLATION (loyalty_tiers_min_points_unique) when the program has a tier at minPoints. */
export async function insertTier(tx: Sql, workspaceId: string, programId: string, tier: { name: string; minPoints: number; multiplier: number }): Promise<Tier> {
  const { rows } = await tx.query<TierRow>(
    `INSERT INTO loyalty_tiers (workspace_id, program_id, name, min_points, multiplier) VALUES ($1, $2, $3, $4, $5) RETURNING ${TIER_COLUMNS}`,
    [workspaceId, programId, tier.name, tier.minPoints, tier.multiplier],
  );
  return toTier(rows[0]!);
}

export async function findTier(db: Sql, workspaceId: string, programId: string, tierId: string): Promise<Tier | undefined> {
  const { rows } = await db.query<TierRow>(
    `SELECT ${TIER_COLUMNS} FROM loyalty_tiers WHERE workspace_id = $1 AND program_id = $2 AND id = $3`,
    [workspaceId, programId, tierId],
  );
  return rows[0] && toTier(rows[0]);
}

export async function updateTier(tx: Sql, workspaceId: string, tierId: string, tier: { name: string; minPoints: number; multiplier: number }): Promise<Tier> {
  const { rows } = await tx.query<TierRow>(
    `UPDATE loyalty_tiers SET name = $3, min_points = $4, multiplier = $5, updated_at = now() WHERE workspace_id = $1 AND id = $2 RETURNING ${TIER_COLUMNS}`,
    [workspaceId, tierId, tier.name, tier.minPoints, tier.multiplier],
  );
  return toTier(rows[0]!);
}

export async function deleteTier(tx: Sql, workspaceId: string, tierId: string): Promise<void> {
  await tx.query('DELETE FROM loyalty_tiers WHERE workspace_id = $1 AND id = $2', [workspaceId, tierId]);
}

export async function listTiers(db: Sql, workspaceId: string, programId: string): Promise<Tier[]> {
  const { rows } = await db.query<TierRow>(
    `SELECT ${TIER_COLUMNS} FROM loyalty_tiers WHERE workspace_id = $1 AND program_id = $2 ORDER BY min_points LIMIT 1000`,
    [workspaceId, programId],
  );
  return rows.map(toTier);
}

/** Program rows are locked while their tiers change, so placements of one program take turns. */
export async function lockProgram(tx: Sql, workspaceId: string, programId: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `SELECT 1 FROM campaigns WHERE workspace_id = $1 AND id = $2 AND type = 'LOYALTY_PROGRAM' FOR NO KEY UPDATE`,
    [workspaceId, programId],
  );
  return (rowCount ?? 0) > 0;
}

export async function programExists(db: Sql, workspaceId: string, programId: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM campaigns WHERE workspace_id = $1 AND id = $2 AND type = 'LOYALTY_PROGRAM'`, [workspaceId, programId]);
  return rows.length > 0;
}

/** Segments and customers are read (never written) to check the ids a request names. */
export async function segmentExists(db: Sql, workspaceId: string, segmentId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM segments WHERE workspace_id = $1 AND id = $2', [workspaceId, segmentId]);
  return rows.length > 0;
}

export async function customerExists(db: Sql, workspaceId: string, customerId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM customers WHERE workspace_id = $1 AND id = $2', [workspaceId, customerId]);
  return rows.length > 0;
}
