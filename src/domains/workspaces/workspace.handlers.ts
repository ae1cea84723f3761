// Workspace handlers: each write is one unit of work (the change, its audit entry and its event commit together).
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { workspaceContract } from './workspace.contract.js';
import { findWorkspace, lockWorkspace, notifyKeysChanged, updateWorkspace } from './workspace.queries.js';
import { canonicalTimeZone } from './workspace.schemas.js';
import { insertWorkspaceWithFirstKey } from './workspace.service.js';

const notFound = () => problem('not_found', 'workspace not found');

export const workspaceHandlers = implement(workspaceContract, {
  async createWorkspace({ input, mutate }) {
    return mutate(async ({ tx, record }) => {
      const created = await insertWorkspaceWithFirstKey(tx, input.name);
      // The entry belongs to the caller's workspace (the unit's) and names the new one; the key it shows once is not
      // recorded.
      record({ resourceType: 'workspace', resourceId: created.id, after: { id: created.id, name: created.name } });
      return created;
    });
  },
  async getCurrentWorkspace({ actor, deps }) {
    const workspace = await findWorkspace(deps.db, actor.workspaceId);
    if (!workspace) throw notFound();
    return workspace;
  },
  async updateWorkspace({ input, actor, deps, mutate }) {
    const patch = input.timeZone === undefined ? input : { ...input, timeZone: canonicalTimeZone(input.timeZone) };
    const workspace = await mutate(async ({ tx, record, emit }) => {
      const before = await lockWorkspace(tx, actor.workspaceId);
      if (!before) throw notFound();
      const after = await updateWorkspace(tx, actor.workspaceId, patch);
      if (!after) throw notFound();
      if (input.rateLimit !== undefined) await notifyKeysChanged(tx, actor.workspaceId);
      record({ resourceType: 'workspace', resourceId: actor.workspaceId, before, after });
      emit('workspace.updated', { workspaceId: actor.workspaceId, workspace: after });
      return after;
    });
    // After the commit: this process's keys come back with the new default on their next use.
    if (input.rateLimit !== undefined) deps.forgetApiKeys();
    // The partitions re-read what depends on the time zone (budget periods, schedules).
    await deps.engine.rulesChanged(actor.workspaceId);
    return workspace;
  },
});
