// Workspace operations.
import { defineOperation } from '../../contract/operation.js';
import { CreatedWorkspace, CreateWorkspaceBody, UpdateWorkspaceBody, Workspace } from './workspace.schemas.js';

const tags = ['Workspaces'];

export const workspaceContract = {
  createWorkspace: defineOperation({
    name: 'workspaces.create',
    method: 'post',
    path: '/workspaces',
    scope: 'workspaces:admin',
    summary: 'Create a workspace and its first key',
    description: 'Needs `workspaces:admin`, held only by keys made by the CLI or BOOTSTRAP_API_KEY. The key is shown once.',
    tags,
    body: CreateWorkspaceBody,
    output: CreatedWorkspace,
    successStatus: 201,
  }),
  getCurrentWorkspace: defineOperation({
    name: 'workspaces.current',
    method: 'get',
    path: '/workspace',
    scope: 'workspaces:read',
    summary: "The calling key's workspace",
    tags,
    output: Workspace,
  }),
  updateWorkspace: defineOperation({
    name: 'workspaces.update',
    method: 'patch',
    path: '/workspace',
    scope: 'workspaces:write',
    summary: "Update the calling key's workspace settings",
    description:
      'Fields left out keep their value. `timeZone` must be an IANA name Intl knows (e.g. `Europe/Berlin`; stored in ' +
      'its canonical spelling); budget periods follow it from the next redemption on. A new `stackLimit` may take up ' +
      'to 5 seconds to reach stacks (each web process caches it that long). `rateLimit` is the default token bucket of ' +
      'keys without their own limit; it applies within a second in every web process. `defaultCurrency` is the currency ' +
      'a voucher whose amounts are money takes when neither it nor its campaign names one (vouchers made before keep ' +
      'theirs); once set it may change but not be removed. Emits `workspace.updated`.',
    tags,
    body: UpdateWorkspaceBody,
    output: Workspace,
  }),
};
