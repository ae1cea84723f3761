// Parses the parts of a request (path, query, body) with an operation's zod schemas into one handler input.
import type { z } from 'zod';
import { MAX_FREE_FORM_BYTES, MAX_FREE_FORM_DEPTH } from '../contract/common.schemas.js';
import type { Operation } from '../contract/operation.js';
import { ProblemError, type ProblemFieldError } from '../contract/problems.js';
import { zodIssuesToFieldErrors } from './error-mapping.js';

export interface RawRequestParts {
  params?: unknown;
  query?: unknown;
  body?: unknown;
  idempotencyKey?: string | undefined;
}

/** How field errors name where a value came from: REST says `path.code`, RPC (one merged object) says `code`. */
export interface InputLocations {
  params: string;
  query: string;
  body: string;
}

const REST_LOCATIONS: InputLocations = { params: 'path', query: 'query', body: 'body' };

// PostgreSQL text and jsonb cannot hold NUL characters or unpaired UTF-16 surrogates: refused here, with the field
// named, before a value can reach SQL (where it would fail a whole group-committed batch).
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// What every unstorable text holds, tested first: one character class (no lookaround) clears nearly every string.
const SUSPECT = /[\u0000\ud800-\udfff]/;
const unstorable = (text: string) => SUSPECT.test(text) && UNSTORABLE.test(text);

/** Whether any text (value or property name) in `value` is unstorable: no path built, nothing allocated. */
function holdsUnstorable(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return unstorable(value);
  if (depth > 64 || value === null || typeof value !== 'object') return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (unstorable(key) || holdsUnstorable((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/** Where the first unstorable text is, for the refusal (walked only once holdsUnstorable found one). */
function findUnstorable(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return unstorable(value) ? path : undefined;
  if (depth > 64 || value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = `${path}.${key}`;
    if (unstorable(key)) return at;
    const found = findUnstorable(item, at, depth + 1);
    if (found) return found;
  }
  return undefined;
}

// Free-form JSON: where a schema takes any value (unknown, any), or a record or array of such. zod does not look
// inside it, so its depth and size are checked here, without recursion, before anything else walks it (structured
// clone into a partition, JSON.stringify in the pg client, the audit entry). A preprocess (condition trees) or a
// custom check (import rows) judges its own input.
interface ZodDef {
  type: string;
  innerType?: unknown;
  in?: unknown;
  element?: unknown;
  valueType?: unknown;
  shape?: Record<string, unknown>;
  options?: unknown[];
  left?: unknown;
  right?: unknown;
  items?: unknown[];
  rest?: unknown;
  getter?: () => unknown;
}
const defOf = (schema: unknown): ZodDef => (schema as { _zod: { def: ZodDef } })._zod.def;
const WRAPPERS: ReadonlySet<string> = new Set(['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional', 'success']);
const OPEN: ReadonlySet<string> = new Set(['unknown', 'any']);
const EVERY = '*';

function takesAnyJson(schema: unknown, hops = 0): boolean {
  const def = defOf(schema);
  if (OPEN.has(def.type)) return true;
  if (hops > 20) return false;
  if (WRAPPERS.has(def.type)) return takesAnyJson(def.innerType, hops + 1);
  if (def.type === 'pipe') return takesAnyJson(def.in, hops + 1);
  if (def.type === 'lazy') return takesAnyJson(def.getter!(), hops + 1);
  if (def.type === 'record') return takesAnyJson(def.valueType, hops + 1);
  if (def.type === 'array') return takesAnyJson(def.element, hops + 1);
  return false;
}

/** The paths (property names, `*` for every element) at which a schema takes free-form JSON. */
export function freeFormPaths(schema: z.ZodType): string[][] {
  const found = new Map<string, string[]>();
  const seen = new Set<unknown>();
  const walk = (node: unknown, path: string[]): void => {
    if (takesAnyJson(node)) {
      found.set(path.join('\u0000'), path);
      return;
    }
    const def = defOf(node);
    if (WRAPPERS.has(def.type)) return walk(def.innerType, path);
    if (def.type === 'pipe') return walk(def.in, path);
    if (def.type === 'lazy') {
      if (seen.has(node)) return;
      seen.add(node);
      return walk(def.getter!(), path);
    }
    if (def.type === 'object') for (const [key, child] of Object.entries(def.shape ?? {})) walk(child, [...path, key]);
    if (def.type === 'array') walk(def.element, [...path, EVERY]);
    if (def.type === 'record') walk(def.valueType, [...path, EVERY]);
    if (def.type === 'union') for (const option of def.options ?? []) walk(option, path);
    if (def.type === 'intersection') [def.left, def.right].forEach((side) => walk(side, path));
    if (def.type === 'tuple') {
      (def.items ?? []).forEach((item, i) => walk(item, [...path, String(i)]));
      if (def.rest) walk(def.rest, [...path, EVERY]);
    }
  };
  walk(schema, []);
  return [...found.values()];
}

const freeFormPathsOf = new WeakMap<z.ZodType, string[][]>();

function cachedFreeFormPaths(schema: z.ZodType): string[][] {
  let paths = freeFormPathsOf.get(schema);
  if (!paths) freeFormPathsOf.set(schema, (paths = freeFormPaths(schema)));
  return paths;
}

const isContainer = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** The values a raw input holds at a path, with their concrete paths (`items.0.metadata`). */
function valuesAt(root: unknown, path: readonly string[]): Array<{ value: unknown; at: string[] }> {
  let level = [{ value: root, at: [] as string[] }];
  for (const step of path) {
    const next: typeof level = [];
    for (const { value, at } of level) {
      if (!isContainer(value)) continue;
      if (step !== EVERY) {
        if (!Array.isArray(value) && Object.hasOwn(value, step)) next.push({ value: value[step], at: [...at, step] });
        continue;
      }
      for (const [key, item] of Object.entries(value)) next.push({ value: item, at: [...at, key] });
    }
    level = next;
  }
  return level;
}

/** Nesting depth of a JSON value ({} and [] are 1, a scalar 0), measured without recursion and given up past `limit`. */
export function jsonDepth(value: unknown, limit = MAX_FREE_FORM_DEPTH): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (!isContainer(node)) continue;
    if (depth > deepest) {
      deepest = depth;
      if (deepest > limit) return deepest;
    }
    for (const key in node) if (isContainer(node[key])) stack.push([node[key], depth + 1]);
  }
  return deepest;
}

function freeFormProblem(operation: Operation, raw: RawRequestParts, where: InputLocations): ProblemError | undefined {
  for (const part of ['params', 'query', 'body'] as const) {
    const schema = operation[part];
    if (!schema || raw[part] === undefined) continue;
    for (const path of cachedFreeFormPaths(schema)) {
      for (const { value, at } of valuesAt(raw[part], path)) {
        // Named only for a refusal: most requests have none.
        const field = () => [where[part], ...at].filter(Boolean).join('.');
        if (jsonDepth(value) > MAX_FREE_FORM_DEPTH) {
          return new ProblemError('invalid_request', `${field()} nests deeper than ${MAX_FREE_FORM_DEPTH} levels`, {
            errors: [{ path: field(), message: `free-form JSON is at most ${MAX_FREE_FORM_DEPTH} levels deep` }],
          });
        }
        if (Buffer.byteLength(JSON.stringify(value) ?? '') > MAX_FREE_FORM_BYTES) {
          return new ProblemError('invalid_request', `${field()} is larger than ${MAX_FREE_FORM_BYTES / 1024} KiB`, {
            errors: [{ path: field(), message: `free-form JSON is at most ${MAX_FREE_FORM_BYTES} bytes as JSON text` }],
          });
        }
      }
    }
  }
  return undefined;
}

export function parseOperationInput(operation: Operation, raw: RawRequestParts, where: InputLocations = REST_LOCATIONS): Record<string, unknown> {
  const tooLarge = freeFormProblem(operation, raw, where);
  if (tooLarge) throw tooLarge;
  const errors: ProblemFieldError[] = [];
  const parse = (schema: z.ZodObject | undefined, value: unknown, location: string) => {
    if (!schema) return {};
    const result = schema.safeParse(value ?? {});
    if (result.success) return result.data as Record<string, unknown>;
    errors.push(...zodIssuesToFieldErrors(result.error, location));
    return {};
  };
  const body = parse(operation.body, raw.body, where.body);
  if (operation.idempotent && raw.idempotencyKey !== undefined && body.idempotencyKey === undefined) {
    body.idempotencyKey = raw.idempotencyKey;
  }
  const input = { ...body, ...parse(operation.query, raw.query, where.query), ...parse(operation.params, raw.params, where.params) };
  if (errors.length) throw new ProblemError('invalid_request', 'the request is invalid', { errors });
  const found = holdsUnstorable(input) ? findUnstorable(input, 'input') : undefined;
  if (found) {
    const field = found.replace(/^input\.?/, '');
    throw new ProblemError('invalid_request', 'text must not contain NUL characters or unpaired surrogates', {
      errors: [{ path: field, message: 'contains a NUL character or an unpaired surrogate' }],
    });
  }
  return input;
}
