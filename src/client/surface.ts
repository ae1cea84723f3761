// What both entries of the client library export alike: src/client/index.ts (bound to the registry, for this
// repository's CLI and tests) and the published package's index (scripts/client-package/entry.ts, bound to the
// generated operation table). Each entry adds its own binding (createClient, the operation types) beside these.
export { type BatchCall, type BatchOutcome, type CallOptions, type ClientOptions, type OperationInfo, type ServerDescription } from './client.js';
export { ApiError, ConnectionError, PromotionsError, TimeoutError, VersionMismatchError, type ProblemDetails, type ProblemFieldError } from './errors.js';
export { CLIENT_VERSION, CLIENT_VERSION_HEADER, isCompatibleVersion, SERVER_VERSION_HEADER } from './version.js';
export type { ProblemCode } from './problem-codes.js';
// Webhook receivers verify X-Service-Signature with the same package (owned by the webhooks work).
export {
  EVENT_ID_HEADER,
  EVENT_TYPE_HEADER,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
  type VerifyOptions,
  type WebhookVerification,
} from '../platform/webhook-signature.js';
