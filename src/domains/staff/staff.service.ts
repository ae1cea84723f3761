// Staff use cases behind the handlers: sign in (throttled, audited, the same 401 for an unknown
// email and a wrong password), sessions from a cookie token, invitations and their acceptance.
import type { Actor, RequestMeta } from '../../contract/actor.js';
import type { AuditTrail, RecordedChange } from '../../contract/handler.js';
import { ProblemError, problem } from '../../contract/problems.js';
import { withTransaction, type Pool, type Sql } from '../../platform/database.js';
import { createMutations, insertAuditEntries } from '../audit/index.js';
import { ensureDefaultWorkspace } from '../workspaces/index.js';
import { generateToken, hashPassword, hashToken, UNKNOWN_USER_HASH, verifyPassword } from './staff-secret.js';
import type { StaffRoleName } from './staff-role.rules.js';
import type { StaffSettings } from '../../contract/service-settings.js';
import {
  deleteEndedSessions,
  findLiveSession,
  findStaffUserByEmail,
  insertInvitation,
  insertSession,
  insertStaffUser,
  linkInvitation,
  staffEmailExists,
  takeInvitation,
} from './staff.queries.js';
import type { CreatedStaffInvitation, StaffSession, StaffUser } from './staff.schemas.js';

/** A new session: what the caller sees, and the token that goes into the cookie only. */
export interface OpenedSession {
  session: StaffSession;
  token: string;
}

const SESSION_RESOURCE = 'staff_session';
/** Nothing secret is recorded of a sign-in: these names are stripped should they ever appear in a change. */
const SECRET_FIELDS: ReadonlySet<string> = new Set(['password', 'token', 'currentPassword', 'newPassword']);

export function staffActor(user: StaffUser, sessionId?: string): Actor {
  return { type: 'staff_user', id: user.id, label: user.email, scopes: user.scopes, workspaceId: user.workspaceId, sessionId };
}

function trailOf(operation: string, actor: Actor, request: RequestMeta): AuditTrail {
  return {
    workspaceId: actor.workspaceId,
    operation,
    actor: { type: actor.type, id: actor.id, label: actor.label },
    requestId: request.requestId,
    ip: request.ip,
    userAgent: request.userAgent,
  };
}

/** The session's end as the caller sees it: when it goes idle, at the latest its absolute end. */
export function sessionEnd(lastSeenAt: Date, expiresAt: Date, idleMs: number): string {
  return new Date(Math.min(lastSeenAt.getTime() + idleMs, expiresAt.getTime())).toISOString();
}

async function openSession(tx: Sql, settings: StaffSettings, user: StaffUser): Promise<OpenedSession & { sessionId: string }> {
  await deleteEndedSessions(tx, user.workspaceId, user.id, settings.sessionIdleMs);
  const token = generateToken();
  const stored = await insertSession(tx, { workspaceId: user.workspaceId, staffUserId: user.id, tokenHash: hashToken(token), maxAgeMs: settings.sessionMaxAgeMs });
  return { token, sessionId: stored.id, session: { staffUser: user, expiresAt: sessionEnd(stored.createdAt, stored.expiresAt, settings.sessionIdleMs) } };
}

export async function signIn(
  db: Pool,
  settings: StaffSettings,
  credentials: { email: string; password: string },
  request: RequestMeta,
  operation: string,
): Promise<OpenedSession> {
  const decision = settings.throttle.begin(credentials.email, request.ip ?? 'unknown');
  if (!decision.allowed) {
    throw new ProblemError('rate_limited', 'too many failed sign-ins; wait before trying again', {
      headers: { 'Retry-After': String(decision.retryAfterSeconds) },
    });
  }
  const found = await findStaffUserByEmail(db, credentials.email);
  // An unknown email is checked against a dummy hash, so both refusals take the time of one scrypt.
  const matches = await verifyPassword(credentials.password, found?.passwordHash ?? UNKNOWN_USER_HASH);
  if (!found || !matches) {
    await recordFailedSignIn(db, found?.user.workspaceId, credentials.email, request, operation);
    throw problem('unauthorized', 'the email or the password is wrong');
  }
  settings.throttle.succeeded(decision.attempt);
  const actor = staffActor(found.user);
  const mutations = createMutations(db, trailOf(operation, actor, request), SECRET_FIELDS);
  return mutations.mutate(async ({ tx, record }) => {
    const opened = await openSession(tx, settings, found.user);
    record({ resourceType: SESSION_RESOURCE, resourceId: opened.sessionId, after: { staffUserId: found.user.id, email: found.user.email } });
    return opened;
  });
}

/** A refused sign-in, in the user's workspace (an unknown email: the default one); the actor is the email tried. */
async function recordFailedSignIn(db: Pool, workspaceId: string | undefined, email: string, request: RequestMeta, operation: string): Promise<void> {
  const workspace = workspaceId ?? (await ensureDefaultWorkspace(db)).id;
  const actor: Actor = { type: 'system', id: 'sign-in', label: email, scopes: [], workspaceId: workspace };
  const change: RecordedChange = { resourceType: SESSION_RESOURCE, resourceId: null, after: { outcome: 'refused', email } };
  await insertAuditEntries(db, [{ trail: trailOf(operation, actor, request), change }]);
}

/** The live session of a cookie token, or undefined. */
export async function sessionOfToken(db: Sql, settings: StaffSettings, token: string) {
  const live = await findLiveSession(db, hashToken(token), settings.sessionIdleMs);
  return live && { ...live, end: sessionEnd(live.lastSeenAt, live.expiresAt, settings.sessionIdleMs) };
}

export interface InvitationRequest {
  workspaceId: string;
  email: string;
  role: StaffRoleName;
  invitedBy: string;
  /** The dashboard's URL, e.g. `https://promo.example.com/dashboard` (relative without a public URL). */
  dashboardUrl: string;
  ttlMs: number;
}

/**
 * An email already staff in this workspace is refused (409). One that is staff in another workspace is invited like
 * any other: refusing it would tell this workspace's admins who is staff elsewhere. An email signs in to one workspace
 * only, so its acceptance is then refused, to the one holding the token (the email's owner), who can ask for another.
 */
export async function createInvitation(tx: Sql, request: InvitationRequest): Promise<CreatedStaffInvitation> {
  if (await staffEmailExists(tx, request.email, request.workspaceId)) throw problem('conflict', `a staff user with the email ${request.email} exists already`);
  const token = generateToken();
  const invitation = await insertInvitation(tx, { ...request, tokenHash: hashToken(token) });
  // The token travels in the fragment: browsers never send it to a server, so no access log holds it.
  return { ...invitation, token, link: `${request.dashboardUrl}/#/accept-invitation/${token}` };
}

export async function acceptInvitation(
  db: Pool,
  settings: StaffSettings,
  input: { token: string; password: string; name?: string | undefined },
  request: RequestMeta,
  operation: string,
): Promise<OpenedSession> {
  // The password is hashed before the transaction, so no row stays locked during scrypt.
  const passwordHash = await hashPassword(input.password);
  return withTransaction(db, async (tx) => {
    const invitation = await takeInvitation(tx, hashToken(input.token));
    if (!invitation) throw problem('invalid_request', 'the invitation is unknown, used or expired');
    const user = await insertStaffUser(tx, { workspaceId: invitation.workspaceId, email: invitation.email, name: input.name, role: invitation.role, passwordHash });
    if (!user) {
      throw problem('conflict', `the email ${invitation.email} already signs in to a workspace (one email, one workspace): accept with another email, or sign in with this one`);
    }
    await linkInvitation(tx, invitation.workspaceId, invitation.id, user.id);
    const opened = await openSession(tx, settings, user);
    const change: RecordedChange = { resourceType: 'staff_user', resourceId: user.id, after: user };
    await insertAuditEntries(tx, [{ trail: trailOf(operation, staffActor(user), request), change }]);
    return opened;
  });
}
