// API key handlers.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { hasScope, type Scope } from '../../contract/scopes.js';
import { apiKeyContract } from './api-key.contract.js';
import { forgetApiKeys } from './api-key-cache.js';
import { listApiKeys, revokeApiKey } from './api-key.queries.js';
import { createApiKey } from './api-key.service.js';

export const apiKeyHandlers = implement(apiKeyContract, {
  async createApiKey({ input, auth, deps }) {
    const missing = input.scopes.filter((scope) => !hasScope(auth.scopes, scope as Scope));
    if (missing.length) throw problem('forbidden', `this key cannot grant scopes it does not hold: ${missing.join(', ')}`);
    return createApiKey(deps.db, { workspaceId: auth.workspaceId, name: input.name, scopes: [...new Set(input.scopes)] });
  },
  async listApiKeys({ input, auth, deps }) {
    return listApiKeys(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async revokeApiKey({ input, auth, deps }) {
    if (!(await revokeApiKey(deps.db, auth.workspaceId, input.id))) throw problem('not_found', 'no such API key');
    forgetApiKeys();
  },
});
