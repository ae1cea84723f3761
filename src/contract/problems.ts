// The transport error catalog (code → status, title) and ProblemError, rendered as RFC 9457 problem+json.
export const PROBLEMS = Object.freeze({
  invalid_request: { status: 400, title: 'Invalid request' },
  currency_required: { status: 400, title: 'A money amount needs a currency' },
  version_mismatch: { status: 400, title: 'Client version does not match the server' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  not_acceptable: { status: 406, title: 'Not acceptable' },
  conflict: { status: 409, title: 'Conflict' },
  idempotency_conflict: { status: 409, title: 'Idempotency key reused with a different request' },
  return_exceeds_order: { status: 409, title: 'The return exceeds what is left of the order' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
});

export type ProblemCode = keyof typeof PROBLEMS;
export const PROBLEM_CODES = Object.keys(PROBLEMS) as [ProblemCode, ...ProblemCode[]];

export interface ProblemFieldError {
  path: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  code: ProblemCode;
  errors?: ProblemFieldError[];
}

export const PROBLEM_TYPE_BASE = 'https://promotions.dev/problems/';

export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors: ProblemFieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ProblemCode, detail?: string, options?: { errors?: ProblemFieldError[]; headers?: Record<string, string> }) {
    super(detail ?? PROBLEMS[code].title);
    this.code = code;
    this.status = PROBLEMS[code].status;
    this.errors = options?.errors;
    this.headers = options?.headers;
  }

  toBody(): ProblemBody {
    return {
      type: PROBLEM_TYPE_BASE + this.code.replaceAll('_', '-'),
      title: PROBLEMS[this.code].title,
      status: this.status,
      detail: this.message,
      code: this.code,
      ...(this.errors?.length ? { errors: this.errors } : {}),
    };
  }
}

export function problem(code: ProblemCode, detail?: string, options?: { errors?: ProblemFieldError[] }): ProblemError {
  return new ProblemError(code, detail, options);
}

/** A 400 about one field, named in `errors` as well as in the detail. */
export function invalidField(path: string, message: string): ProblemError {
  return new ProblemError('invalid_request', message, { errors: [{ path, message }] });
}
