// Runs one operation for any face (REST, RPC, MCP): scope check, input parsing, handler, success status.
import type { AuthContext, BoundHandler, ServiceDeps } from '../contract/handler.js';
import type { Operation } from '../contract/operation.js';
import { ProblemError, type ProblemFieldError } from '../contract/problems.js';
import { hasScope } from '../contract/scopes.js';
import type { Logger } from '../platform/logger.js';
import { parseOperationInput, type RawRequestParts } from './operation-input.js';

export interface OperationResult {
  status: 200 | 201 | 204;
  /** Undefined for 204. */
  body: unknown;
}

/** The Idempotency-Key header, the alternative to an operation's `idempotencyKey` body field. */
export function idempotencyHeader(req: { headers: Record<string, string | string[] | undefined> }): string | undefined {
  const value = req.headers['idempotency-key'];
  return typeof value === 'string' ? value : undefined;
}

export function assertScope(operation: Operation, auth: AuthContext): void {
  if (!hasScope(auth.scopes, operation.scope)) {
    throw new ProblemError('forbidden', `${operation.name} needs the ${operation.scope} scope`);
  }
}

export interface RunContext {
  auth: AuthContext;
  deps: ServiceDeps;
  log: Logger;
}

/** The input must already be parsed (parseOperationInput or parseMergedInput); the scope is checked again here. */
export async function runParsedOperation(bound: BoundHandler, input: Record<string, unknown>, ctx: RunContext): Promise<OperationResult> {
  const { operation, handle } = bound;
  assertScope(operation, ctx.auth);
  const output = await handle({ input: input as never, auth: ctx.auth, deps: ctx.deps, log: ctx.log.child({ operation: operation.name }) });
  return { status: operation.successStatus, body: operation.successStatus === 204 ? undefined : output };
}

const MERGED_LOCATIONS = { params: '', query: '', body: '' };

/** REST sends path and query values as strings; RPC and MCP get JSON, so scalars are made strings the same way. */
function asRequestString(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asRequestString);
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
