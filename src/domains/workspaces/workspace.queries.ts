// SQL of workspaces.
import type { Sql } from '../../platform/database.js';
import { presentFields } from '../../platform/partial-update.js';
import { API_KEY_CHANNEL, rateLimitOfRow, rateLimitSetting } from '../access/index.js';
import type { UpdateWorkspaceBody, Workspace } from './workspace.schemas.js';

interface WorkspaceRow {
  [column: string]: unknown;
  workspace_id: string;
  name: string;
  stack_limit: number;
  time_zone: string;
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
  default_currency: string | null;
  created_at: Date;
}

const COLUMNS = 'workspace_id, name, stack_limit, time_zone, rate_limit_per_second, rate_limit_burst, default_currency, created_at';

function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    id: row.workspace_id,
    name: row.name,
    stackLimit: row.stack_limit,
    timeZone: row.time_zone,
    rateLimit: rateLimitOfRow(row),
    defaultCurrency: row.default_currency,
    createdAt: row.created_at.toISOString(),
  };
}

export async function insertWorkspace(db: Sql, name: string): Promise<Workspace> {
  const { rows } = await db.query<WorkspaceRow>(`INSERT INTO workspaces (name) VALUES ($1) RETURNING ${COLUMNS}`, [name]);
  return toWorkspace(rows[0]!);
}

export async function findWorkspace(db: Sql, workspaceId: string): Promise<Workspace | undefined> {
  const { rows } = await db.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces WHERE workspace_id = $1`, [workspaceId]);
  return rows[0] && toWorkspace(rows[0]);
}

/** The currency money takes when neither a voucher nor its campaign names one; null when the workspace sets none. */
export async function findDefaultCurrency(db: Sql, workspaceId: string): Promise<string | null> {
  const { rows } = await db.query<{ default_currency: string | null }>('SELECT default_currency FROM workspaces WHERE workspace_id = $1', [workspaceId]);
  return rows[0]?.default_currency ?? null;
}

/** The workspace as it is before a change, locked until the caller's transaction ends (its audit entry's `before`). */
export async function lockWorkspace(tx: Sql, workspaceId: string): Promise<Workspace | undefined> {
  const { rows } = await tx.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces WHERE workspace_id = $1 FOR NO KEY UPDATE`, [workspaceId]);
  return rows[0] && toWorkspace(rows[0]);
}

/**
 * Applies the fields present in the patch ($2 names them). A changed stack limit or time zone bumps
 * promotions_version, so qualification indexes built on the old settings are rebuilt.
 */
export async function updateWorkspace(db: Sql, workspaceId: string, patch: UpdateWorkspaceBody): Promise<Workspace | undefined> {
  const limit = patch.rateLimit ? rateLimitSetting(patch.rateLimit) : undefined;
  const { rows } = await db.query<WorkspaceRow>(
    `WITH next AS (
       SELECT workspace_id,
         CASE WHEN 'name' = ANY($2) THEN $3::text ELSE name END AS name,
         CASE WHEN 'stackLimit' = ANY($2) THEN $4::int ELSE stack_limit END AS stack_limit,
         CASE WHEN 'timeZone' = ANY($2) THEN $5::text ELSE time_zone END AS time_zone,
         CASE WHEN 'rateLimit' = ANY($2) THEN $6::int ELSE rate_limit_per_second END AS rate_limit_per_second,
         CASE WHEN 'rateLimit' = ANY($2) THEN $7::int ELSE rate_limit_burst END AS rate_limit_burst,
         CASE WHEN 'defaultCurrency' = ANY($2) THEN $8::text ELSE default_currency END AS default_currency
       FROM workspaces WHERE workspace_id = $1 FOR UPDATE
     )
     UPDATE workspaces w SET name = n.name, stack_limit = n.stack_limit, time_zone = n.time_zone,
       rate_limit_per_second = n.rate_limit_per_second, rate_limit_burst = n.rate_limit_burst, default_currency = n.default_currency,
       promotions_version = w.promotions_version
         + CASE WHEN (n.stack_limit, n.time_zone) IS DISTINCT FROM (w.stack_limit, w.time_zone) THEN 1 ELSE 0 END
     FROM next n
     WHERE w.workspace_id = n.workspace_id
     RETURNING w.workspace_id, w.name, w.stack_limit, w.time_zone, w.rate_limit_per_second, w.rate_limit_burst, w.default_currency,
       w.created_at`,
    [
      workspaceId,
      presentFields(patch),
      patch.name ?? null,
      patch.stackLimit ?? null,
      patch.timeZone ?? null,
      limit?.requestsPerSecond ?? null,
      limit?.burst ?? null,
      patch.defaultCurrency ?? null,
    ],
  );
  return rows[0] && toWorkspace(rows[0]);
}

/** Every process forgets its verified keys at commit, so they come back with the workspace's new default limit. */
export async function notifyKeysChanged(tx: Sql, workspaceId: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [API_KEY_CHANNEL, workspaceId]);
}

/** The default workspace, created on first use; safe when several processes start together. */
export async function ensureDefaultWorkspace(db: Sql): Promise<Workspace> {
  await db.query(
    `INSERT INTO workspaces (name, is_default) VALUES ('Default', true) ON CONFLICT (is_default) WHERE is_default DO NOTHING`,
  );
  const { rows } = await db.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces WHERE is_default`);
  return toWorkspace(rows[0]!);
}
