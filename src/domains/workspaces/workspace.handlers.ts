// Workspace handlers.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { workspaceContract } from './workspace.contract.js';
import { findWorkspace } from './workspace.queries.js';
import { createWorkspace } from './workspace.service.js';

export const workspaceHandlers = implement(workspaceContract, {
  async createWorkspace({ input, deps }) {
    return createWorkspace(deps.db, input.name);
  },
  async getCurrentWorkspace({ auth, deps }) {
    const workspace = await findWorkspace(deps.db, auth.workspaceId);
    if (!workspace) throw problem('not_found', 'workspace not found');
    return workspace;
  },
});
