// SQL of workspaces.
import type { Sql } from '../../platform/database.js';
import type { Workspace } from './workspace.schemas.js';

interface WorkspaceRow {
  [column: string]: unknown;
  workspace_id: string;
  name: string;
  stack_limit: number;
  created_at: Date;
}

const COLUMNS = 'workspace_id, name, stack_limit, created_at';

function toWorkspace(row: WorkspaceRow): Workspace {
  return { id: row.workspace_id, name: row.name, stackLimit: row.stack_limit, createdAt: row.created_at.toISOString() };
}

export async function insertWorkspace(db: Sql, name: string): Promise<Workspace> {
  const { rows } = await db.query<WorkspaceRow>(`INSERT INTO workspaces (name) VALUES ($1) RETURNING ${COLUMNS}`, [name]);
  return toWorkspace(rows[0]!);
}

export async function findWorkspace(db: Sql, workspaceId: string): Promise<Workspace | undefined> {
  const { rows } = await db.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces WHERE workspace_id = $1`, [workspaceId]);
  return rows[0] && toWorkspace(rows[0]);
}

/** The default workspace, created on first use; safe when several processes start together. */
export async function ensureDefaultWorkspace(db: Sql): Promise<Workspace> {
  await db.query(
    `INSERT INTO workspaces (name, is_default) VALUES ('Default', true) ON CONFLICT (is_default) WHERE is_default DO NOTHING`,
  );
  const { rows } = await db.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces WHERE is_default`);
  return toWorkspace(rows[0]!);
}
