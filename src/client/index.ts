// The client library's public surface in this repository (the CLI, the tests): bound to the registry and typed from
// its zod schemas. The published package (`npm run build` → dist/client-package) exports the same names.
import { operations } from '../registry.js';
import { createClientFor, type ClientFor, type ClientOptions } from './client.js';
import type { RegistryApi } from './operation-types.js';

export type PromotionsClient = ClientFor<RegistryApi>;

export function createClient(options: ClientOptions): PromotionsClient {
  return createClientFor<RegistryApi>(operations, options);
}

export type { GroupName, InputOf, ItemOf, ListOperationName, OperationName, OutputOf } from './operation-types.js';
export * from './surface.js';
