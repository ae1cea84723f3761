// The one operation pipeline, shared by every face (REST, the hot-path dispatcher, RPC single and batch, MCP):
// resolve the actor (pluggable authenticators) → check the scope → parse the input → the idempotency claim → run
// the handler with its unit of work → the success status; anything thrown becomes a problem through error-mapping's
// problemOf(). Each HTTP request is admitted once (admit(): the actor and its rate limit) before its operations run.
// A traced request runs its operation in a span of its own; refusals are reported to the observer (/metrics).
import type { Actor, Authenticator, Credentials, RequestMeta } from '../contract/actor.js';
import { Existing, Refused, type AuditTrail, type BoundHandler, type HandlerContext, type RefusedOutcome, type ServiceDeps, type UnitOfWork } from '../contract/handler.js';
import { claimOf, replayOf, type IdempotencyClaim } from '../contract/idempotency.js';
import type { Operation } from '../contract/operation.js';
import { ProblemError, type ProblemFieldError } from '../contract/problems.js';
import { hasScope } from '../contract/scopes.js';
import { secretFieldNamesFor } from '../contract/secrets.js';
import { createMutations } from '../domains/audit/index.js';
import { withTransaction } from '../platform/database.js';
import { claimKey, storeReply } from '../platform/idempotency-keys.sql.js';
import type { Logger } from '../platform/logger.js';
import type { RateLimitDecision } from '../platform/rate-limit.js';
import { inSpan, isTracing } from '../platform/tracing.js';
import { parseOperationInput, type RawRequestParts } from './operation-input.js';
import { NO_OBSERVER, refusalCodeOf, type RequestObserver } from './request-observer.js';

export interface OperationResult {
  status: 200 | 201 | 202 | 204;
  /** Undefined for 204. */
  body: unknown;
}

/** REST and the hot path hand over the request's parts; RPC and MCP one JSON object holding them all. */
export type RawInput = { kind: 'parts'; parts: RawRequestParts } | { kind: 'merged'; value: unknown; idempotencyKey?: string | undefined };

export interface PipelineOptions {
  handlers: readonly BoundHandler[];
  deps: ServiceDeps;
  /** Asked in order; the first that recognises the credentials decides (a Bearer key wins over a cookie). */
  authenticators: readonly Authenticator[];
  /** Property names never written to the audit log or events (secretFieldNames of the registry). */
  secretFields: ReadonlySet<string>;
  /** Rate limits per caller and per client address; none: nothing is limited. */
  rateLimits?: RequestRateLimits | undefined;
  /** Told of every request and refusal (metrics); none: nothing is counted. */
  observer?: RequestObserver | undefined;
}

/** The token buckets admit() consults (domains/access RequestRateLimiter). */
export interface RequestRateLimits {
  forActor(actor: Actor, cost: number): RateLimitDecision | undefined;
  forUnauthenticated(address: string | undefined): RateLimitDecision | undefined;
  screen(address: string | undefined, credentials: Credentials): RateLimitDecision | undefined;
}

/** One HTTP request as admit() sees it; `cost`: the operations it carries (an RPC batch: its calls). */
export interface Caller {
  credentials: Credentials;
  address: string | undefined;
  cost?: number;
}

export interface Admission {
  actor: Actor;
  /** RateLimit-Policy and RateLimit, for the response; none when no limit applies. */
  headers: Record<string, string> | undefined;
}

function rateLimited(decision: RateLimitDecision, detail: string): ProblemError {
  return new ProblemError('rate_limited', `${detail}; retry in ${decision.retryAfterSeconds} s`, { headers: decision.headers });
}

const UNAUTHENTICATED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="api"' };

const ALWAYS = () => true;

function refuseUnitOfWork(operation: Operation): () => never {
  return () => {
    throw new Error(`${operation.name} is declared ${operation.effect}: it has no unit of work`);
  };
}

/** Thrown out of a unit of work whose key holds a reply already: nothing commits, the reply is answered. */
class Replayed {
  constructor(readonly reply: Record<string, unknown>) {}
}

const NO_REPLY = Symbol('no reply stored');

/** The Idempotency-Key header, the alternative to an operation's `idempotencyKey` body field. */
export function idempotencyHeader(req: { headers: Record<string, string | string[] | undefined> }): string | undefined {
  const value = req.headers['idempotency-key'];
  return typeof value === 'string' ? value : undefined;
}

export class OperationPipeline {
  readonly handlers: readonly BoundHandler[];
  readonly deps: ServiceDeps;
  readonly observer: RequestObserver;
  readonly #byName: ReadonlyMap<string, BoundHandler>;
  readonly #authenticators: readonly Authenticator[];
  readonly #secretFields: ReadonlySet<string>;
  /** Per operation: the registry's secret names but those its own schemas declare plain (secretFieldNamesFor). */
  readonly #secretFieldsOf: ReadonlyMap<string, ReadonlySet<string>>;
  readonly #rateLimits: RequestRateLimits | undefined;
  /** Per operation without a unit of work (read, none): what its mutate() and auditTrail() throw. */
  readonly #refusals: ReadonlyMap<string, () => never>;

  constructor(options: PipelineOptions) {
    this.handlers = options.handlers;
    this.deps = options.deps;
    this.observer = options.observer ?? NO_OBSERVER;
    this.#byName = new Map(options.handlers.map((h) => [h.operation.name, h]));
    this.#authenticators = options.authenticators;
    this.#secretFields = options.secretFields;
    this.#secretFieldsOf = new Map(options.handlers.map((h) => [h.operation.name, secretFieldNamesFor(options.secretFields, [h.operation.body, h.operation.output])]));
    this.#rateLimits = options.rateLimits;
    const withoutUnitOfWork = options.handlers.filter((h) => h.operation.effect !== 'write');
    this.#refusals = new Map(withoutUnitOfWork.map((h) => [h.operation.name, refuseUnitOfWork(h.operation)]));
  }

  get operations(): Operation[] {
    return this.handlers.map((h) => h.operation);
  }

  /** The bound handler of an operation name, or a 404 problem. */
  find(name: string, hint = ''): BoundHandler {
    const bound = this.#byName.get(name);
    if (!bound) throw new ProblemError('not_found', `no operation named ${name.slice(0, 100)}${hint}`);
    return bound;
  }

  /** Step 1: who calls. Once per HTTP request (a batch or an MCP message runs all its calls as that actor). */
  async authenticate(credentials: Credentials): Promise<Actor> {
    for (const authenticator of this.#authenticators) {
      const actor = await authenticator.authenticate(credentials);
      if (actor) return actor;
    }
    throw new ProblemError('unauthorized', 'send Authorization: Bearer <API key>', { headers: UNAUTHENTICATED_HEADERS });
  }

  /**
   * Step 1 with the rate limits: the actor, charged to its bucket (429 `rate_limited` when empty). A request that
   * does not authenticate is charged to its client address instead; once that bucket is empty the address is refused
   * before any key is looked up.
   */
  async admit(caller: Caller): Promise<Admission> {
    const limits = this.#rateLimits;
    if (!limits) return { actor: await this.authenticate(caller.credentials), headers: undefined };
    const screened = limits.screen(caller.address, caller.credentials);
    if (screened) throw rateLimited(screened, 'too many requests without a valid API key from this address');
    let actor: Actor;
    try {
      actor = await this.authenticate(caller.credentials);
    } catch (error) {
      if (!(error instanceof ProblemError) || error.code !== 'unauthorized') throw error;
      const decision = limits.forUnauthenticated(caller.address);
      if (!decision) throw error;
      if (!decision.allowed) throw rateLimited(decision, 'too many requests without a valid API key from this address');
      throw new ProblemError('unauthorized', error.message, { headers: { ...error.headers, ...decision.headers } });
    }
    const decision = limits.forActor(actor, caller.cost ?? 1);
    if (decision && !decision.allowed) throw rateLimited(decision, 'this caller\'s rate limit is exhausted');
    return { actor, headers: decision?.headers };
  }

  /** Step 2: may it. Checked before the input is looked at, so a caller without the scope learns nothing of the schema. */
  authorize(operation: Operation, actor: Actor): void {
    if (!hasScope(actor.scopes, operation.scope)) {
      throw new ProblemError('forbidden', `${operation.name} needs the ${operation.scope} scope`);
    }
  }

  /** Steps 2 to 4: scope, input, handler (with the unit of work its effect calls for). */
  execute(bound: BoundHandler, actor: Actor, raw: RawInput, request: RequestMeta, log: Logger): Promise<OperationResult> {
    if (!isTracing()) return this.#execute(bound, actor, raw, request, log);
    const attributes = { 'promotions.operation': bound.operation.name, 'promotions.workspace_id': actor.workspaceId };
    return inSpan(bound.operation.name, attributes, async (span) => {
      const result = await this.#execute(bound, actor, raw, request, log);
      const code = refusalCodeOf(result.body);
      if (code) span.setAttribute('promotions.refusal_code', code);
      return result;
    });
  }

  async #execute(bound: BoundHandler, actor: Actor, raw: RawInput, request: RequestMeta, log: Logger): Promise<OperationResult> {
    const { operation } = bound;
    this.authorize(operation, actor);
    const input =
      raw.kind === 'parts' ? parseOperationInput(operation, raw.parts) : parseMergedInput(operation, raw.value, raw.idempotencyKey);
    const claim = claimOf(operation, input);
    const ctx = this.#context(operation, actor, input, claim, request, log);
    let output: unknown;
    try {
      output = await bound.handle(ctx.handler);
    } catch (error) {
      // Neither a replay nor a refusal committed a change: no audit entry is owed.
      // A replay answers what it found, as a create that finds its resource does (existingStatus), when one is declared.
      if (error instanceof Replayed) return { status: operation.existingStatus ?? operation.successStatus, body: error.reply };
      if (!(error instanceof Refused) || operation.effect !== 'write') throw error;
      return { status: operation.successStatus, body: await this.#refused(actor.workspaceId, claim, error.outcome) };
    }
    if (output instanceof Existing) {
      if (operation.existingStatus === undefined) throw new Error(`${operation.name} answered an existing resource but declares no existingStatus`);
      return { status: operation.existingStatus, body: output.value };
    }
    if (operation.effect === 'write' && !ctx.audited()) {
      throw new Error(`${operation.name} is a write but committed without an audit entry`);
    }
    if (ctx.reply() !== NO_REPLY && ctx.reply() !== output) {
      throw new Error(`${operation.name} answered other than its unit of work's result, which its replays answer`);
    }
    const refused = refusalCodeOf(output);
    if (refused !== undefined) this.observer.refused(operation.name, refused);
    return { status: operation.successStatus, body: operation.successStatus === 204 ? undefined : output };
  }

  /**
   * A refused write answers its outcome; under a key, the outcome is stored on its own transaction's claim, unless a
   * concurrent request took the key first: then that one's reply (or 409) is the answer.
   */
  async #refused(workspaceId: string, claim: IdempotencyClaim | undefined, outcome: RefusedOutcome): Promise<unknown> {
    if (!claim) return outcome;
    const earlier = await withTransaction(this.deps.db, async (tx) => {
      const stored = await claimKey(tx, workspaceId, claim);
      if (stored === undefined) await storeReply(tx, workspaceId, claim.key, outcome);
      return stored;
    });
    return earlier === undefined ? outcome : replayOf(earlier, claim.hash);
  }

  #context(operation: Operation, actor: Actor, input: Record<string, unknown>, idempotency: IdempotencyClaim | undefined, request: RequestMeta, log: Logger) {
    const base = { input: input as never, actor, idempotency, deps: this.deps, request, log: operation.hot ? log : log.child({ operation: operation.name }) };
    if (operation.effect !== 'write') {
      // Every validate and qualification passes here: the operation's refusal is made once, not per request.
      const refuse = this.#refusals.get(operation.name) ?? refuseUnitOfWork(operation);
      const handler: HandlerContext<Operation> = Object.assign(base, { mutate: refuse, auditTrail: refuse });
      return { handler, audited: ALWAYS, reply: () => NO_REPLY };
    }
    const trail: AuditTrail = {
      workspaceId: actor.workspaceId,
      operation: operation.name,
      actor: { type: actor.type, id: actor.id, label: actor.label },
      requestId: request.requestId,
      ip: request.ip,
      userAgent: request.userAgent,
    };
    const mutations = createMutations(this.deps.db, trail, this.#secretFieldsOf.get(operation.name) ?? this.#secretFields);
    let stored: unknown = NO_REPLY;
    // Under a key, the key is claimed first in the unit of work (a concurrent claim waits for it, then replays) and
    // the reply is stored with the change; a write the engine commits carries `idempotency` to the engine instead.
    const claimedBy =
      (claim: IdempotencyClaim) =>
      <T>(work: (unit: UnitOfWork) => Promise<T>): Promise<T> =>
        mutations.mutate(async (unit) => {
          const earlier = await claimKey(unit.tx, actor.workspaceId, claim);
          if (earlier !== undefined) throw new Replayed(replayOf(earlier, claim.hash));
          const reply = await work(unit);
          await storeReply(unit.tx, actor.workspaceId, claim.key, reply);
          stored = reply;
          return reply;
        });
    const handler: HandlerContext<Operation> = {
      ...base,
      mutate: idempotency ? claimedBy(idempotency) : (work) => mutations.mutate(work),
      auditTrail: () => mutations.auditTrail(),
    };
    return { handler, audited: () => mutations.audited, reply: () => stored };
  }
}

const MERGED_LOCATIONS = { params: '', query: '', body: '' };

/** REST sends path and query values as strings; RPC and MCP get JSON, so scalars are made strings the same way. */
function asRequestString(value: unknown): unknown {
  // One level, as a query string has: a nested array is left for the schema to refuse (never recursed into).
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'number' || typeof item === 'boolean' ? String(item) : item));
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
}

function pick(keys: readonly string[], from: Record<string, unknown>, map: (v: unknown) => unknown = (v) => v) {
  const picked: Record<string, unknown> = {};
  for (const key of keys) if (Object.hasOwn(from, key)) picked[key] = map(from[key]);
  return picked;
}

/**
 * The RPC and MCP input: one JSON object holding the path, query and body fields. It is split back into its parts
 * and parsed by the very schemas REST uses; a field no part declares is refused, so a typo is not silently dropped.
 */
export function parseMergedInput(operation: Operation, raw: unknown, idempotencyKey?: string): Record<string, unknown> {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ProblemError('invalid_request', 'the input must be a JSON object', { errors: [{ path: '', message: 'expected an object' }] });
  }
  const given = raw as Record<string, unknown>;
  const paramKeys = Object.keys(operation.params?.shape ?? {});
  const queryKeys = Object.keys(operation.query?.shape ?? {});
  const bodyKeys = Object.keys(operation.body?.shape ?? {});
  const known = new Set([...paramKeys, ...queryKeys, ...bodyKeys]);
  const unknown: ProblemFieldError[] = Object.keys(given)
    .filter((key) => !known.has(key))
    .map((key) => ({ path: key, message: `${operation.name} takes no field ${key}` }));
  if (unknown.length) throw new ProblemError('invalid_request', 'the input has unknown fields', { errors: unknown });
  const parts: RawRequestParts = {
    ...(operation.params ? { params: pick(paramKeys, given, asRequestString) } : {}),
    ...(operation.query ? { query: pick(queryKeys, given, asRequestString) } : {}),
    ...(operation.body ? { body: pick(bodyKeys, given) } : {}),
    idempotencyKey,
  };
  return parseOperationInput(operation, parts, MERGED_LOCATIONS);
}
