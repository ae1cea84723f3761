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

export function parseOperationInput(operation: Operation, raw: RawRequestParts): Record<string, unknown> {
  const errors: ProblemFieldError[] = [];
  const parse = (schema: z.ZodObject | undefined, value: unknown, where: string) => {
    if (!schema) return {};
    const result = schema.safeParse(value ?? {});
    if (result.success) return result.data as Record<string, unknown>;
    errors.push(...zodIssuesToFieldErrors(result.error, where));
    return {};
  };
  const body = parse(operation.body, raw.body, 'body');
  if (operation.idempotent && raw.idempotencyKey !== undefined && body.idempotencyKey === undefined) {
    body.idempotencyKey = raw.idempotencyKey;
  }
  const input = { ...body, ...parse(operation.query, raw.query, 'query'), ...parse(operation.params, raw.params, 'path') };
  if (errors.length) throw new ProblemError('invalid_request', 'the request is invalid', { errors });
  return input;
}
