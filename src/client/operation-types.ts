// Types of the client derived from the registry: operation names, inputs (before defaults) and outputs. The client
// package gets the same names from types generated at build time (scripts/build-client-package.mjs).
import type { z } from 'zod';
import type { ObjectSchema, Operation } from '../contract/operation.js';
import type { operations } from '../registry.js';
import type { GroupIn, InputArgsIn, ItemIn, ListNameIn } from './operation-map.js';

export type RegisteredOperation = (typeof operations)[number];
export type OperationName = RegisteredOperation['name'];
export type OperationOf<N extends OperationName> = Extract<RegisteredOperation, { name: N }>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type InputPart<S> = S extends z.ZodType ? z.input<S> : unknown;

/** What the caller sends: path, query and body fields in one object, defaults not yet applied. */
export type InputOf<N extends OperationName> =
  OperationOf<N> extends Operation<infer P, infer Q, infer B, z.ZodType | undefined, N>
    ? Simplify<InputPart<P> & InputPart<Q> & InputPart<B>>
    : never;

/** What the service answers (void for 204). */
export type OutputOf<N extends OperationName> =
  OperationOf<N> extends Operation<ObjectSchema | undefined, ObjectSchema | undefined, ObjectSchema | undefined, infer O, N>
    ? O extends z.ZodType
      ? z.output<O>
      : void
    : never;

/** Every registered operation's types, the map the client is typed by. */
export type RegistryApi = { [N in OperationName]: { input: InputOf<N>; output: OutputOf<N> } };

/** Operations answering a list envelope `{ data, next?, prev? }`. */
export type ListOperationName = ListNameIn<RegistryApi>;
export type ItemOf<N extends ListOperationName> = ItemIn<RegistryApi, N>;
export type GroupName = GroupIn<RegistryApi>;
/** An input with no required field may be left out. */
export type InputArgs<N extends OperationName> = InputArgsIn<RegistryApi, N>;
