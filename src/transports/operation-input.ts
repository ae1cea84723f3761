// Parses the parts of a request (path, query, body) with an operation's zod schemas into one handler input.
import type { z } from 'zod';
import type { Operation } from '../contract/operation.js';
import { ProblemError, type ProblemFieldError } from '../contract/problems.js';
import { zodIssuesToFieldErrors } from '../http/problem-handler.js';

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
  return input;
}
