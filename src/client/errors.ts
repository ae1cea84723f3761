// Typed client errors: ApiError carries the problem+json fields; connection failures and time-outs are their own.
import type { ProblemCode } from './problem-codes.js';

/** One field named by a 400 `invalid_request`. */
export interface ProblemFieldError {
  path: string;
  message: string;
}

export class PromotionsError extends Error {
  override name = 'PromotionsError';
}

export interface ProblemDetails {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  code: ProblemCode | (string & {});
  errors?: ProblemFieldError[];
}

/** The service answered with a problem (RFC 9457); every field of the body is kept. */
export class ApiError extends PromotionsError {
  override name = 'ApiError';
  readonly status: number;
  readonly code: ProblemDetails['code'];
  readonly type: string | undefined;
  readonly title: string | undefined;
  readonly detail: string | undefined;
  readonly errors: ProblemFieldError[];
  readonly operation: string;
  readonly requestId: string | undefined;
  /** Seconds, from Retry-After (429, 503). */
  readonly retryAfter: number | undefined;

  constructor(operation: string, problem: ProblemDetails, meta: { requestId?: string | undefined; retryAfter?: number | undefined } = {}) {
    super(`${operation}: ${problem.status} ${problem.code}${problem.detail ? ` - ${problem.detail}` : ''}`);
    this.operation = operation;
    this.status = problem.status;
    this.code = problem.code;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.requestId = meta.requestId;
    this.retryAfter = meta.retryAfter;
  }

  toProblem(): ProblemDetails {
    return {
      ...(this.type ? { type: this.type } : {}),
      ...(this.title ? { title: this.title } : {}),
      status: this.status,
      ...(this.detail ? { detail: this.detail } : {}),
      code: this.code,
      ...(this.errors.length ? { errors: this.errors } : {}),
    };
  }
}

/** The server refused this client's version (400 version_mismatch): install the client matching the server. */
export class VersionMismatchError extends ApiError {
  override name = 'VersionMismatchError';
}

/** No answer: the connection failed (refused, reset, DNS). */
export class ConnectionError extends PromotionsError {
  override name = 'ConnectionError';
}

/** No answer within the time-out. */
export class TimeoutError extends PromotionsError {
  override name = 'TimeoutError';
}
