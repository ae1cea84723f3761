// API key handlers: each change is one unit of work with its audit entry and its api_key.* event; the plaintext key
// goes to the caller only, never into the entry or the event. Also the operator face's seed of BOOTSTRAP_API_KEY.
import { existing, implement } from '../../contract/handler.js';
import { problem, ProblemError } from '../../contract/problems.js';
import { hasScope, type Scope } from '../../contract/scopes.js';
import { apiKeyContract, apiKeyOperatorContract } from './api-key.contract.js';
import { listApiKeys, revokeApiKey, updateApiKey } from './api-key.queries.js';
import { createApiKey, findBootstrapApiKey, insertBootstrapApiKey } from './api-key.service.js';

const RESOURCE = 'api_key';

export const apiKeyHandlers = implement(apiKeyContract, {
  async createApiKey({ input, actor, mutate }) {
    const missing = input.scopes.filter((scope) => !hasScope(actor.scopes, scope as Scope));
    if (missing.length) throw problem('forbidden', `this key cannot grant scopes it does not hold: ${missing.join(', ')}`);
    return mutate(async ({ tx, record, emit }) => {
      const created = await createApiKey(tx, {
        workspaceId: actor.workspaceId,
        name: input.name,
        scopes: [...new Set(input.scopes)],
        rateLimit: input.rateLimit,
      });
      const { key: _plaintext, ...apiKey } = created;
      record({ resourceType: RESOURCE, resourceId: apiKey.id, after: apiKey });
      emit('api_key.created', { apiKeyId: apiKey.id, name: apiKey.name, prefix: apiKey.prefix, scopes: apiKey.scopes });
      return created;
    });
  },
  async listApiKeys({ input, actor, deps }) {
    return listApiKeys(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async updateApiKey({ input, actor, deps, mutate }) {
    const { id, ...patch } = input;
    const updated = await mutate(async ({ tx, record, emit }) => {
      const changed = await updateApiKey(tx, actor.workspaceId, id, patch);
      if (!changed) throw problem('not_found', 'no such API key');
      record({ resourceType: RESOURCE, resourceId: id, before: changed.before, after: changed.after });
      emit('api_key.updated', { apiKeyId: id, name: changed.after.name, rateLimit: changed.after.rateLimit });
      return changed.after;
    });
    // After the commit, as for a revocation: this process re-reads the key (and its limit) on its next use.
    deps.forgetApiKeys();
    return updated;
  },
  async revokeApiKey({ input, actor, deps, mutate }) {
    await mutate(async ({ tx, record, emit }) => {
      const revoked = await revokeApiKey(tx, actor.workspaceId, input.id);
      if (!revoked) throw problem('not_found', 'no such API key');
      record({ resourceType: RESOURCE, resourceId: revoked.id, before: revoked });
      emit('api_key.revoked', { apiKeyId: revoked.id });
    });
    // After the commit, so this process never re-caches the key from a transaction still in flight.
    deps.forgetApiKeys();
  },
});

export const apiKeyOperatorHandlers = implement(apiKeyOperatorContract, {
  async bootstrapApiKey({ input, actor, deps, mutate }) {
    const present = (apiKeyId: string) => existing({ outcome: 'present' as const, apiKeyId });
    const found = await findBootstrapApiKey(deps.db, input.key);
    if (found) return present(found);
    try {
      return await mutate(async ({ tx, record, emit }) => {
        const apiKey = await insertBootstrapApiKey(tx, actor.workspaceId, input.key);
        if (!apiKey) throw problem('conflict', 'a key with this prefix exists already');
        record({ resourceType: RESOURCE, resourceId: apiKey.id, after: apiKey });
        emit('api_key.created', { apiKeyId: apiKey.id, name: apiKey.name, prefix: apiKey.prefix, scopes: apiKey.scopes });
        return { outcome: 'created' as const, apiKeyId: apiKey.id };
      });
    } catch (error) {
      // Another process seeded it between the look-up and the insert (both starting at once).
      const seeded = error instanceof ProblemError && error.code === 'conflict' ? await findBootstrapApiKey(deps.db, input.key) : undefined;
      if (seeded) return present(seeded);
      throw error;
    }
  },
});
