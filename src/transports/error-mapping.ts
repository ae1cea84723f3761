// The one mapping of anything thrown on the way to or from a handler to a problem (RFC 9457), used by every face.
// Unknown errors become internal_error, logged once with the request id and never echoed with a stack.
import { z } from 'zod';
import { invalidField, PROBLEMS, ProblemError, type ProblemCode, type ProblemFieldError } from '../contract/problems.js';
import { InvalidCursorError } from '../platform/cursor.js';
import { isConnectionError, sqlState } from '../platform/database.js';
import { MalformedBodyError } from '../platform/http-request.js';
import type { Logger } from '../platform/logger.js';

const STATUS_CODES: Partial<Record<number, ProblemCode>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

interface ValidatorError {
  status: number;
  message: string;
  errors?: Array<{ path?: string; message?: string }>;
}

function isValidatorError(error: unknown): error is ValidatorError {
  return typeof error === 'object' && error !== null && 'status' in error && typeof error.status === 'number' && 'message' in error;
}

export function zodIssuesToFieldErrors(error: z.ZodError, prefix: string): ProblemFieldError[] {
  return error.issues.map((issue) => ({ path: [prefix, ...issue.path.map(String)].filter(Boolean).join('.'), message: issue.message }));
}

/** Maps anything thrown to a ProblemError; returns undefined for errors that are ours (500). */
export function toProblem(error: unknown): ProblemError | undefined {
  if (error instanceof ProblemError) return error;
  if (error instanceof InvalidCursorError) return invalidField('query.cursor', `invalid cursor: ${error.message}`);
  if (error instanceof MalformedBodyError) return new ProblemError(error.kind === 'charset' ? 'unsupported_media_type' : 'invalid_request', error.message);
  if (error instanceof z.ZodError) return new ProblemError('invalid_request', 'the request is invalid', { errors: zodIssuesToFieldErrors(error, '') });
  if (isConnectionError(error)) {
    return new ProblemError('service_unavailable', 'the database is unreachable; retry shortly', { headers: { 'Retry-After': '2' } });
  }
  const state = sqlState(error);
  // Values that passed validation but that PostgreSQL still refuses (class 22: NUL characters, out-of-range
  // numbers or dates, ...) are the client's, not ours.
  if (state?.startsWith('22') || state?.startsWith('54')) {
    return new ProblemError('invalid_request', 'a value is out of range or malformed (e.g. a NUL character)');
  }
  // Transient contention (deadlock, serialization failure): nothing was written, the same request may be retried.
  if (state === '40P01' || state === '40001') {
    return new ProblemError('service_unavailable', 'the request met concurrent work; retry it', { headers: { 'Retry-After': '1' } });
  }
  if (state === '23514') return new ProblemError('conflict', 'the change would break a rule of the stored data');
  if (isValidatorError(error)) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.parse.failed') return new ProblemError('invalid_request', 'the body is not valid JSON');
    if (type === 'entity.too.large') return new ProblemError('payload_too_large', error.message);
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') return new ProblemError('unsupported_media_type', error.message);
    const code = STATUS_CODES[error.status];
    if (code) {
      const errors = (error.errors ?? []).map((e) => ({
        path: String(e.path ?? '').replace(/^\//, '').replaceAll('/', '.'),
        message: String(e.message ?? ''),
      }));
      const detail = code === 'invalid_request' ? 'the request does not match the API schema' : error.message;
      return new ProblemError(code, detail, errors.length ? { errors } : undefined);
    }
  }
  return undefined;
}

/**
 * The problem to answer for a failure, logged as an operator needs it: our own errors (500) at error level with
 * the error, an outage (503) at warn without a stack, the client's problems (4xx) not at all.
 */
export function problemOf(error: unknown, log: Logger, context: Record<string, unknown> = {}): ProblemError {
  const known = toProblem(error);
  if (!known) {
    log.error({ ...context, err: error }, 'request failed');
    return new ProblemError('internal_error', PROBLEMS.internal_error.title);
  }
  if (known.status >= 500) log.warn({ ...context, problem: known.code, err: error instanceof Error ? error.message : String(error) }, 'request failed');
  return known;
}
