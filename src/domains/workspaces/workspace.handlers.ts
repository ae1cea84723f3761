// Workspace handlers.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { workspaceContract } from './workspace.contract.js';
import { findWorkspace, updateWorkspace } from './workspace.queries.js';
import { canonicalTimeZone } from './workspace.schemas.js';
import { createWorkspace } from './workspace.service.js';

const notFound = () => problem('not_found', 'workspace not found');

export const workspaceHandlers = implement(workspaceContract, {
  async createWorkspace({ input, deps }) {
    return createWorkspace(deps.db, input.name);
  },
  async getCurrentWorkspace({ auth, deps }) {
    const workspace = await findWorkspace(deps.db, auth.workspaceId);
    if (!workspace) throw notFound();
    return workspace;
  },
  async updateWorkspace({ input, auth, deps }) {
    const patch = input.timeZone === undefined ? input : { ...input, timeZone: canonicalTimeZone(input.timeZone) };
    const workspace = await updateWorkspace(deps.db, auth.workspaceId, patch);
    if (!workspace) throw notFound();
    // The partitions re-read what depends on the time zone (budget periods, schedules).
    await deps.engine.rulesChanged(auth.workspaceId);
    return workspace;
  },
});
