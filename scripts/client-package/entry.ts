// @promotions/client: the promotions service's client library. Its operation table and types are generated from the
// service's registry when the service is built, so this package and the service share one version.
import type { Operations } from './api.js';
import { createClientFor, type ClientFor, type ClientOptions } from './client.js';
import type { GroupIn, InputArgsIn, ItemIn, ListNameIn } from './operation-map.js';
import { OPERATIONS } from './operation-table.js';

export type PromotionsClient = ClientFor<Operations>;

export function createClient(options: ClientOptions): PromotionsClient {
  return createClientFor<Operations>(OPERATIONS, options);
}

export type OperationName = keyof Operations;
/** What the caller sends: path, query and body fields in one object, defaults not yet applied. */
export type InputOf<N extends OperationName> = Operations[N]['input'];
/** What the service answers (void for 204). */
export type OutputOf<N extends OperationName> = Operations[N]['output'];
/** Operations answering a list envelope `{ data, next?, prev? }`. */
export type ListOperationName = ListNameIn<Operations>;
export type ItemOf<N extends ListOperationName> = ItemIn<Operations, N>;
export type GroupName = GroupIn<Operations>;
/** An input with no required field may be left out. */
export type InputArgs<N extends OperationName> = InputArgsIn<Operations, N>;

export type * from './api.js';
export { OPERATIONS, type OperationEntry } from './operation-table.js';
export * from './surface.js';
