// What the staff tests share: staff users made through the real API (invitation, acceptance), sign-in over HTTP,
// and a "browser": fetch with the session cookie and the service's own Origin, as the dashboard sends them.
import { defaultServiceSettings } from '../../src/composition.js';
import type { StaffSettingsInput } from '../../src/domains/staff/index.js';
import type { TestService } from '../support/service.js';

export const PASSWORD = 'correct horse battery staple';

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** Resets the service's staff settings, and with them the sign-in throttle (a fresh one per call). */
export function useStaffSettings(service: TestService, change: Partial<StaffSettingsInput> = {}): void {
  service.service.settings.staff = defaultServiceSettings({ staff: change }).staff;
}

export async function send(service: TestService, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(service.baseUrl + '/api/v1' + path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body };
}

/** `name=value` of the session cookie a response set, or undefined. */
export function cookieOf(answer: Answer): string | undefined {
  const set = answer.headers.get('set-cookie');
  return set ? set.split(';')[0] : undefined;
}

export async function signIn(service: TestService, email: string, password = PASSWORD, headers: Record<string, string> = {}): Promise<Answer & { cookie: string | undefined }> {
  const answer = await send(service, 'POST', '/sessions', { body: { email, password }, headers });
  return { ...answer, cookie: answer.status === 201 ? cookieOf(answer) : undefined };
}

export interface Browser {
  cookie: string;
  get(path: string): Promise<Answer>;
  post(path: string, body?: unknown): Promise<Answer>;
  patch(path: string, body?: unknown): Promise<Answer>;
  put(path: string, body?: unknown): Promise<Answer>;
  delete(path: string): Promise<Answer>;
  /** Any request with this cookie and exactly the given extra headers (no Origin unless given). */
  raw(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer>;
}

export function browser(service: TestService, cookie: string, origin = service.baseUrl): Browser {
  const call = (method: string, path: string, body?: unknown) => send(service, method, path, { body, headers: { cookie, origin } });
  return {
    cookie,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    patch: (path, body) => call('PATCH', path, body),
    put: (path, body) => call('PUT', path, body),
    delete: (path) => call('DELETE', path),
    raw: (method, path, headers, body) => send(service, method, path, { body, headers: { cookie, ...headers } }),
  };
}

/** A staff user of the key's workspace with the given role, made by invitation and acceptance; signed in. */
export async function staffUser(service: TestService, key: string, role: 'owner' | 'admin' | 'member' | 'viewer', email = `${role}-${Math.random().toString(36).slice(2, 10)}@example.com`) {
  const invited = await send(service, 'POST', '/staff-invitations', { body: { email, role }, headers: { authorization: `Bearer ${key}` } });
  if (invited.status !== 201) throw new Error(`invitation answered ${invited.status}: ${JSON.stringify(invited.body)}`);
  const accepted = await send(service, 'POST', '/staff-invitations/accept', { body: { token: invited.body.token, password: PASSWORD } });
  if (accepted.status !== 201) throw new Error(`acceptance answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
  return { email, id: accepted.body.staffUser.id as string, browser: browser(service, cookieOf(accepted)!) };
}
