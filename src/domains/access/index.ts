// The access domain's public surface.
export { apiKeyContract, apiKeyOperatorContract } from './api-key.contract.js';
export { apiKeyHandlers, apiKeyOperatorHandlers } from './api-key.handlers.js';
export { createApiKey, verifyApiKey } from './api-key.service.js';
export { API_KEY_CHANNEL, ApiKeyVerifier, apiKeyAuthenticator, UNAUTHORIZED_HEADERS } from './api-key-cache.js';
export { countActiveApiKeys, findActiveApiKeyWorkspace } from './api-key.queries.js';
export type { CreatedApiKey } from './api-key.schemas.js';
export { RequestRateLimiter, type RateLimitSettings } from './rate-limit.js';
export { RateLimit, rateLimitOfRow, rateLimitSetting, type RateLimitSetting } from './rate-limit.schemas.js';
