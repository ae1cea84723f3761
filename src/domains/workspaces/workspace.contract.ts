// Workspace operations.
import { defineOperation } from '../../contract/operation.js';
import { CreatedWorkspace, CreateWorkspaceBody, Workspace } from './workspace.schemas.js';

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
};
