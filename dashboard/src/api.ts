// The dashboard's calls: every operation by name over /api/rpc, typed by the registry (type imports only, nothing of
// the server is bundled), and the session routes of /api/v1 that set and clear the cookie. The browser sends the
// cookie and its Origin itself; nothing is kept in localStorage.
import type { InputOf, OperationName, OutputOf } from '../../src/client/operation-types.js';
import type { StaffSession } from '../../src/domains/staff/staff.schemas.js';

export type { StaffSession };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly errors?: { path: string; message: string }[],
  ) {
    super(message);
  }
}

let onSignedOut: () => void = () => undefined;

/** Called when a call answers 401: the session ended (idle, signed out elsewhere, user removed). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

async function request<T>(method: string, url: string, body?: unknown, options: { quiet401?: boolean } = {}): Promise<T> {
  const res = await fetch(url, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    if (res.status === 401 && !options.quiet401) onSignedOut();
    throw new ApiError(res.status, json?.detail ?? json?.title ?? `The service answered ${res.status}`, json?.code, json?.errors);
  }
  return json as T;
}

/** One registered operation, by name, with its merged input. */
export function call<N extends OperationName>(name: N, input: InputOf<N>): Promise<OutputOf<N>> {
  return request<OutputOf<N>>('POST', `/api/rpc/${name}`, input);
}

export const sessions = {
  current: () => request<StaffSession>('GET', '/api/v1/sessions/current', undefined, { quiet401: true }),
  signIn: (email: string, password: string) => request<StaffSession>('POST', '/api/v1/sessions', { email, password }, { quiet401: true }),
  signOut: () => request<void>('DELETE', '/api/v1/sessions/current', undefined, { quiet401: true }),
  acceptInvitation: (token: string, password: string, name?: string) =>
    request<StaffSession>('POST', '/api/v1/staff-invitations/accept', { token, password, ...(name ? { name } : {}) }, { quiet401: true }),
};

/** The message to show for a failure: the problem's detail, with the fields it names. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) {
    const fields = error.errors?.map((e) => `${e.path || 'body'}: ${e.message}`).join('; ');
    return fields ? `${error.message} (${fields})` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
