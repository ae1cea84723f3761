// The staff session cookie: its name and attributes, reading it from a Cookie header, and the authenticator that
// turns it into a staff actor. Cookie-authenticated writes must come from the service's own origin (Origin, else
// Sec-Fetch-Site), so another site cannot make a signed-in browser change anything.
import type { Actor, Authenticator, Credentials } from '../../contract/actor.js';
import { ProblemError } from '../../contract/problems.js';
import type { Logger } from '../../platform/logger.js';
import type { Sql } from '../../platform/database.js';
import type { StaffSettings } from '../../contract/service-settings.js';
import { touchSession } from './staff.queries.js';
import { sessionOfToken, staffActor } from './staff.service.js';

const PLAIN_NAME = 'promotions_session';
/** Over https the cookie takes the __Host- prefix: browsers then insist on Secure, Path=/ and no Domain. */
const HOST_NAME = '__Host-promotions_session';
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function isSecureOrigin(settings: StaffSettings): boolean {
  return settings.publicUrl?.startsWith('https:') === true;
}

function cookieName(settings: StaffSettings): string {
  return isSecureOrigin(settings) ? HOST_NAME : PLAIN_NAME;
}

/** The Set-Cookie value for a new session. */
export function sessionCookie(token: string, expiresAt: Date, settings: StaffSettings): string {
  const secure = isSecureOrigin(settings) ? '; Secure' : '';
  return `${cookieName(settings)}=${token}; Path=/; HttpOnly; SameSite=Strict; Expires=${expiresAt.toUTCString()}${secure}`;
}

/** The Set-Cookie value that removes the cookie (sign-out). */
export function clearedSessionCookie(settings: StaffSettings): string {
  const secure = isSecureOrigin(settings) ? '; Secure' : '';
  return `${cookieName(settings)}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure}`;
}

/** The session token in a Cookie header, if any (a malformed value counts as none). */
export function sessionTokenOf(cookieHeader: string | undefined, settings: StaffSettings): string | undefined {
  if (!cookieHeader) return undefined;
  const name = cookieName(settings);
  for (const part of cookieHeader.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim();
      return TOKEN_PATTERN.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/** The origins a cookie-authenticated write may come from: PUBLIC_URL's, or the loopback origins of the port. */
export function ownOrigins(settings: StaffSettings, listeningPort: number | undefined): string[] {
  if (settings.publicUrl) return [new URL(settings.publicUrl).origin];
  if (listeningPort === undefined) return [];
  return ['127.0.0.1', 'localhost', '[::1]'].map((host) => `http://${host}:${listeningPort}`);
}

export function assertSameOrigin(credentials: Credentials, origins: readonly string[]): void {
  if (SAFE_METHODS.has(credentials.method.toUpperCase())) return;
  const sameOrigin = credentials.origin !== undefined ? origins.includes(credentials.origin) : credentials.secFetchSite === 'same-origin';
  if (!sameOrigin) {
    throw new ProblemError('forbidden', 'a cookie-authenticated change must come from the dashboard’s own origin (Origin / Sec-Fetch-Site); use an API key elsewhere');
  }
}

const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="api"' };

/**
 * The session cookie; not its kind without one, so the pipeline's "send a key" answer stays the default. Listed after
 * the API key: a request with an Authorization header is the key's to decide.
 */
export function staffSessionAuthenticator(db: Sql, log: Logger, settingsOf: () => StaffSettings, origins: () => readonly string[]): Authenticator {
  return {
    name: 'staff_session',
    async authenticate(credentials): Promise<Actor | undefined> {
      const settings = settingsOf();
      const token = sessionTokenOf(credentials.cookie, settings);
      if (!token) return undefined;
      const session = await sessionOfToken(db, settings, token);
      if (!session) throw new ProblemError('unauthorized', 'the session has ended; sign in again', { headers: UNAUTHORIZED_HEADERS });
      assertSameOrigin(credentials, origins());
      if (Date.now() - session.lastSeenAt.getTime() > 60_000) {
        touchSession(db, session.user.workspaceId, session.id).catch((error: unknown) => log.warn({ err: error }, 'could not record staff session use'));
      }
      return staffActor(session.user, session.id);
    },
  };
}
