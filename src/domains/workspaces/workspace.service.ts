// Workspace creation: the workspace and its first `*` key commit together.
import type { Pool } from '../../platform/database.js';
import { withTransaction } from '../../platform/database.js';
import { createApiKey } from '../access/index.js';
import { insertWorkspace } from './workspace.queries.js';
import type { CreatedWorkspace } from './workspace.schemas.js';

export async function createWorkspace(db: Pool, name: string): Promise<CreatedWorkspace> {
  return withTransaction(db, async (tx) => {
    const workspace = await insertWorkspace(tx, name);
    const key = await createApiKey(tx, { workspaceId: workspace.id, name: 'first key', scopes: ['*'] });
    return { ...workspace, apiKey: key.key };
  });
}
