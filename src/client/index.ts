// The client library's public surface: `import { createClient } from 'promotions-service/client'`.
export { createClient, type BatchCall, type BatchOutcome, type CallOptions, type ClientOptions, type PromotionsClient, type ServerDescription } from './client.js';
export { ApiError, ConnectionError, PromotionsError, TimeoutError, VersionMismatchError, type ProblemDetails } from './errors.js';
export type { GroupName, InputOf, ItemOf, ListOperationName, OperationName, OutputOf } from './operation-types.js';
export { CLIENT_VERSION, CLIENT_VERSION_HEADER, isCompatibleVersion, SERVER_VERSION_HEADER } from './version.js';
export type { ProblemCode } from '../contract/problems.js';
// Webhook receivers verify X-Service-Signature with the same package (owned by the webhooks work).
export {
  EVENT_ID_HEADER,
  EVENT_TYPE_HEADER,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
  type VerifyOptions,
  type WebhookVerification,
} from './webhook-signature.js';
