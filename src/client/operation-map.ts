// The client's types over any operation map (name → input and output): the registry's here, generated ones in the
// client package.
/** One operation's types: what the caller sends (path, query and body fields in one object) and the answer. */
export interface OperationTypes {
  input: unknown;
  output: unknown;
}

/** A map from operation name to its types; `Api extends OperationMap<Api>` admits interfaces as well. */
export type OperationMap<Api> = { [N in keyof Api]: OperationTypes };

export type NameIn<Api> = Extract<keyof Api, string>;
export type InputIn<Api extends OperationMap<Api>, N extends keyof Api> = Api[N]['input'];
export type OutputIn<Api extends OperationMap<Api>, N extends keyof Api> = Api[N]['output'];
/** Operations answering a list envelope `{ data, next?, prev? }`. */
export type ListNameIn<Api extends OperationMap<Api>> = {
  [N in NameIn<Api>]: OutputIn<Api, N> extends { data: unknown[] } ? N : never;
}[NameIn<Api>];
export type ItemIn<Api extends OperationMap<Api>, N extends keyof Api> = OutputIn<Api, N> extends { data: Array<infer T> } ? T : never;
type GroupOf<N> = N extends `${infer G}.${string}` ? G : never;
export type GroupIn<Api> = GroupOf<NameIn<Api>>;
/** An input with no required field may be left out. */
export type InputArgsIn<Api extends OperationMap<Api>, N extends keyof Api> = {} extends InputIn<Api, N>
  ? [input?: InputIn<Api, N>]
  : [input: InputIn<Api, N>];
