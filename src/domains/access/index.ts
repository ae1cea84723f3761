// The access domain's public surface.
export { apiKeyContract } from './api-key.contract.js';
export { apiKeyHandlers } from './api-key.handlers.js';
export { createApiKey, verifyApiKey, ensureBootstrapApiKey } from './api-key.service.js';
export { ApiKeyVerifier, apiKeyAuthenticator, UNAUTHORIZED_HEADERS } from './api-key-cache.js';
export { countActiveApiKeys, revokeApiKeyById } from './api-key.queries.js';
export type { CreatedApiKey } from './api-key.schemas.js';
