// defineOperation(): one operation declared once (name, route, scope, zod schemas); every face is built from it.
import { z } from 'zod';
import type { Scope } from './scopes.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ObjectSchema = z.ZodObject<any, any>;

export interface OperationSpec<
  P extends ObjectSchema | undefined = ObjectSchema | undefined,
  Q extends ObjectSchema | undefined = ObjectSchema | undefined,
  B extends ObjectSchema | undefined = ObjectSchema | undefined,
  O extends z.ZodType | undefined = z.ZodType | undefined,
  N extends string = string,
> {
  /** `<group>.<verb>`: REST operationId, RPC procedure, CLI command and MCP tool name at once. */
  name: N;
  method: HttpMethod;
  /** OpenAPI-style path under /api/v1, e.g. `/vouchers/{code}`. */
  path: string;
  scope: Scope;
  summary: string;
  description?: string;
  tags: string[];
  params?: P;
  query?: Q;
  body?: B;
  /** Omitted for operations answering 204 without a body. */
  output?: O;
  /** 202: accepted, the work goes on in the background (a bulk import's job, followed at its own resource). */
  successStatus?: 200 | 201 | 202 | 204;
  /**
   * A create that may find what it would create (asking again for a referrer's code): the handler answers it as
   * `existing(value)`, with this status, having changed nothing (no audit entry). An idempotent operation's replay
   * (the same key again) answers with it too.
   */
  existingStatus?: 200;
  /** Accepts `idempotencyKey` (body) or the Idempotency-Key header. */
  idempotent?: boolean;
  /**
   * What a successful call does: `read` changes nothing; `write` commits a change with exactly one audit entry;
   * `redemption` commits redemptions, recorded as such (no audit entry, as the contract says). Default: `read` for
   * GET, `write` for every other method, so a new mutation is audited unless it says otherwise.
   */
  effect?: OperationEffect;
  /** Served by the lean hot-path dispatcher as well as by express (checkout-time operations). */
  hot?: boolean;
  /**
   * The body may also be streamed instead of sent as JSON (bulk imports): REST takes it in one of `mediaTypes`, up to
   * its own limit (IMPORT_MAX_BYTES), and hands it to the handler as the body field `field`, a StreamedBody. The JSON
   * faces (RPC, MCP, a JSON body) send that field as text.
   */
  bodyStream?: { field: string; mediaTypes: readonly string[] };
}

/** A streamed request body as a handler receives it: its media type and its bytes, which can be read once. */
export class StreamedBody {
  readonly #chunks: AsyncIterable<Uint8Array>;
  #read = false;

  constructor(
    readonly mediaType: string,
    chunks: AsyncIterable<Uint8Array>,
  ) {
    this.#chunks = chunks;
  }

  chunks(): AsyncIterable<Uint8Array> {
    if (this.#read) throw new Error('a streamed body can be read once');
    this.#read = true;
    return this.#chunks;
  }
}

/**
 * `sign-in` (signing in, accepting an invitation): the operation writes its own audit entry, since the actor it
 * records is known only once the credentials are checked, and a refused attempt is recorded as well.
 */
export type OperationEffect = 'read' | 'write' | 'redemption' | 'sign-in';

export interface Operation<
  P extends ObjectSchema | undefined = ObjectSchema | undefined,
  Q extends ObjectSchema | undefined = ObjectSchema | undefined,
  B extends ObjectSchema | undefined = ObjectSchema | undefined,
  O extends z.ZodType | undefined = z.ZodType | undefined,
  N extends string = string,
> extends OperationSpec<P, Q, B, O, N> {
  successStatus: 200 | 201 | 202 | 204;
  effect: OperationEffect;
  hot: boolean;
  /** params ∪ query ∪ body as one object: the input of the RPC transport and the client. */
  input: z.ZodObject;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : unknown;

export type OperationInput<Op> =
  Op extends Operation<infer P, infer Q, infer B, z.ZodType | undefined> ? Parsed<P> & Parsed<Q> & Parsed<B> : never;

export type OperationOutput<Op> =
  Op extends Operation<ObjectSchema | undefined, ObjectSchema | undefined, ObjectSchema | undefined, infer O>
    ? O extends z.ZodType
      ? z.input<O>
      : void
    : never;

export function defineOperation<
  P extends ObjectSchema | undefined = undefined,
  Q extends ObjectSchema | undefined = undefined,
  B extends ObjectSchema | undefined = undefined,
  O extends z.ZodType | undefined = undefined,
  N extends string = string,
>(spec: OperationSpec<P, Q, B, O, N>): Operation<P, Q, B, O, N> {
  if (!/^[a-z][a-zA-Z]*\.[a-z][a-zA-Z]*$/.test(spec.name)) throw new Error(`operation name ${spec.name}: use <group>.<verb>`);
  const input = z.object({ ...spec.params?.shape, ...spec.query?.shape, ...spec.body?.shape });
  return Object.freeze({
    ...spec,
    successStatus: spec.successStatus ?? (spec.output ? 200 : 204),
    effect: spec.effect ?? (spec.method === 'get' ? 'read' : 'write'),
    hot: spec.hot ?? false,
    input,
  });
}

/** `/vouchers/{code}` → `/vouchers/:code` */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}
