// API key operations, and the seed only the operator face runs.
import { z } from 'zod';
import { ListQuery, listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { ApiKey, BootstrapApiKeyBody, BootstrappedApiKey, CreateApiKeyBody, CreatedApiKey, UpdateApiKeyBody } from './api-key.schemas.js';

const tags = ['API keys'];

export const apiKeyContract = {
  createApiKey: defineOperation({
    name: 'apiKeys.create',
    method: 'post',
    path: '/api-keys',
    scope: 'api-keys:write',
    summary: 'Create an API key',
    description:
      'The full key is in this response only. A key can only grant scopes its creator holds. `rateLimit` gives it a ' +
      "token bucket of its own; without one it runs under the workspace's default (PATCH /workspace), else the server's.",
    tags,
    body: CreateApiKeyBody,
    output: CreatedApiKey,
    successStatus: 201,
  }),
  listApiKeys: defineOperation({
    name: 'apiKeys.list',
    method: 'get',
    path: '/api-keys',
    scope: 'api-keys:read',
    summary: 'List active API keys (without secrets)',
    tags,
    query: ListQuery,
    output: listEnvelope(ApiKey, 'ApiKeyList'),
  }),
  updateApiKey: defineOperation({
    name: 'apiKeys.update',
    method: 'patch',
    path: '/api-keys/{id}',
    scope: 'api-keys:write',
    summary: "Rename a key or change its rate limit",
    description:
      'Fields left out keep their value; `rateLimit: null` returns the key to the workspace default. The new limit ' +
      'applies within a second in every web process (the key caches are told at commit).',
    tags,
    params: z.object({ id: Uuid }),
    body: UpdateApiKeyBody,
    output: ApiKey,
  }),
  revokeApiKey: defineOperation({
    name: 'apiKeys.revoke',
    method: 'delete',
    path: '/api-keys/{id}',
    scope: 'api-keys:write',
    summary: 'Revoke an API key; it answers 401 from then on',
    tags,
    params: z.object({ id: Uuid }),
  }),
};

/**
 * Run only by the operator face (transports/operator-pipeline.ts: start-up and the admin CLI), in no registry, so no
 * network face serves it; its method and path are nominal.
 */
export const apiKeyOperatorContract = {
  bootstrapApiKey: defineOperation({
    name: 'apiKeys.bootstrap',
    method: 'post',
    path: '/api-keys/bootstrap',
    scope: 'workspaces:admin',
    summary: "Seed a given key (BOOTSTRAP_API_KEY) with every scope in the actor's workspace, unless its prefix exists",
    tags,
    body: BootstrapApiKeyBody,
    output: BootstrappedApiKey,
    successStatus: 201,
    existingStatus: 200,
  }),
};
