// Workspace creation: the workspace and its first `*` key commit together.
import type { Pool, Sql } from '../../platform/database.js';
import { withTransaction } from '../../platform/database.js';
import { createApiKey } from '../access/index.js';
import { insertWorkspace } from './workspace.queries.js';
import type { CreatedWorkspace } from './workspace.schemas.js';

/** In the caller's transaction (the operation's unit of work). */
export async function insertWorkspaceWithFirstKey(tx: Sql, name: string): Promise<CreatedWorkspace> {
  const workspace = await insertWorkspace(tx, name);
  const key = await createApiKey(tx, { workspaceId: workspace.id, name: 'first key', scopes: ['*'] });
  return { ...workspace, apiKey: key.key };
}

/** In a transaction of its own, for the CLI and test setup (no operation, so no audit entry). */
export async function createWorkspace(db: Pool, name: string): Promise<CreatedWorkspace> {
  return withTransaction(db, (tx) => insertWorkspaceWithFirstKey(tx, name));
}
