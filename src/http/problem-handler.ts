// Renders every error as RFC 9457 application/problem+json. Unknown errors become internal_error, never a stack.
import type { IncomingMessage } from 'node:http';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { invalidField, PROBLEMS, ProblemError, type ProblemCode, type ProblemFieldError } from '../contract/problems.js';
import { InvalidCursorError } from '../platform/cursor.js';
import { isConnectionError, sqlState } from '../platform/database.js';

export function sendProblem(res: Response, error: ProblemError): void {
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  res.status(error.status).type('application/problem+json').send(JSON.stringify(error.toBody()));
}

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

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ProblemError('not_found', `no route for ${req.method} ${req.path}`));
};

export function hasRequestContent(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

export const problemHandler: ErrorRequestHandler = (error, req, res, _next) => {
  let known = toProblem(error);
  // The validator calls a missing body an unsupported media type; for the client it is a missing body.
  if (known?.code === 'unsupported_media_type' && !hasRequestContent(req)) {
    known = invalidField('body', 'this operation needs a JSON body');
  }
  if (known) {
    if (known.status >= 500) req.log?.error({ err: error instanceof Error ? error.message : String(error) }, 'request failed');
    sendProblem(res, known);
    return;
  }
  req.log?.error({ err: error }, 'unexpected error');
  sendProblem(res, new ProblemError('internal_error', PROBLEMS.internal_error.title));
};
