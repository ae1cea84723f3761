// The client library's public surface in this repository (the CLI, the tests): bound to the registry and typed from
// its zod schemas. The published package (`npm run build` → dist/client-package) exports the same names.
import { operations } from '../contract/registry.js';
import { createClientFor, type ClientFor, type ClientOptions } from './client.js';
import type { RegistryApi } from './operation-types.js';

export type PromotionsClient = ClientFor<RegistryApi>;

export function createClient(options: ClientOptions): PromotionsClient {
  return createClientFor<RegistryApi>(operations, options);
}

export { type BatchCall, type BatchOutcome, type CallOptions, type ClientOptions, type OperationInfo, type ServerDescription } from './client.js';
export { ApiError, ConnectionError, PromotionsError, TimeoutError, VersionMismatchError, type ProblemDetails, type ProblemFieldError } from './errors.js';
export type { GroupName, InputOf, ItemOf, ListOperationName, OperationName, OutputOf } from './operation-types.js';
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
} from './webhook-signature.js';
