// API key operations.
import { z } from 'zod';
import { ListQuery, listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { ApiKey, CreateApiKeyBody, CreatedApiKey } from './api-key.schemas.js';

const tags = ['API keys'];

export const apiKeyContract = {
  createApiKey: defineOperation({
    name: 'apiKeys.create',
    method: 'post',
    path: '/api-keys',
    scope: 'api-keys:write',
    summary: 'Create an API key',
    description: 'The full key is in this response only. A key can only grant scopes its creator holds.',
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
