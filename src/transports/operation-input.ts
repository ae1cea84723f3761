// Parses the parts of a request (path, query, body) with an operation's zod schemas into one handler input.
import type { z } from 'zod';
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

function findUnstorable(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path : undefined;
  if (depth > 64 || value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = `${path}.${key}`;
    if (UNSTORABLE.test(key)) return at;
    const found = findUnstorable(item, at, depth + 1);
    if (found) return found;
  }
  return undefined;
}

export function parseOperationInput(operation: Operation, raw: RawRequestParts, where: InputLocations = REST_LOCATIONS): Record<string, unknown> {
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
  const unstorable = findUnstorable(input, 'input');
  if (unstorable) {
    const field = unstorable.replace(/^input\.?/, '');
    throw new ProblemError('invalid_request', 'text must not contain NUL characters or unpaired surrogates', {
      errors: [{ path: field, message: 'contains a NUL character or an unpaired surrogate' }],
    });
  }
  return input;
}
