// The workspaces domain's public surface.
export { workspaceContract } from './workspace.contract.js';
export { workspaceHandlers } from './workspace.handlers.js';
export { createWorkspace } from './workspace.service.js';
export { ensureDefaultWorkspace, findDefaultCurrency, findWorkspace } from './workspace.queries.js';
export type { Workspace } from './workspace.schemas.js';
