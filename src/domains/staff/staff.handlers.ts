// Staff handlers (and the operator face's owner seed). Signing in and accepting an invitation hand the new session's
// token back under SESSION_TOKEN, a symbol no serializer writes: only the cookie face (http/dashboard.ts) reads it.
import type { Actor } from '../../contract/actor.js';
import { existing, implement } from '../../contract/handler.js';
import { problem, ProblemError } from '../../contract/problems.js';
import { hashPassword, verifyPassword } from './staff-secret.js';
import { mayGrantRole } from './staff-role.rules.js';
import { staffContract, staffOperatorContract } from './staff.contract.js';
import {
  deleteSession,
  deleteSessionsOfUser,
  deleteStaffUser,
  findLiveSessionById,
  findStaffUser,
  insertStaffUser,
  listStaffUsers,
  lockOwners,
  setStaffPassword,
  staffEmailExists,
  updateStaffUser,
} from './staff.queries.js';
import type { StaffSession } from './staff.schemas.js';
import { acceptInvitation, createInvitation, sessionEnd, signIn, type OpenedSession } from './staff.service.js';

export const SESSION_TOKEN: unique symbol = Symbol('staff session token');

export type WithSessionToken = StaffSession & { [SESSION_TOKEN]: string };

const withToken = (opened: OpenedSession): WithSessionToken => Object.assign({ ...opened.session }, { [SESSION_TOKEN]: opened.token });

/** The staff user behind a session cookie; an API key (or anything else) has no session. */
function sessionActor(actor: Actor): Actor & { sessionId: string } {
  if (actor.type !== 'staff_user' || !actor.sessionId) throw problem('unauthorized', 'this call needs a signed-in staff session (the dashboard cookie)');
  return actor as Actor & { sessionId: string };
}

export const staffHandlers = implement(staffContract, {
  async signIn({ input, deps, request }) {
    return withToken(await signIn(deps.db, deps.settings.staff, input, request, 'sessions.create'));
  },
  async currentSession({ actor, deps }) {
    const { sessionId } = sessionActor(actor);
    const { sessionIdleMs } = deps.settings.staff;
    const live = await findLiveSessionById(deps.db, actor.workspaceId, sessionId, sessionIdleMs);
    if (!live) throw problem('unauthorized', 'the session has ended; sign in again');
    return { staffUser: live.user, expiresAt: sessionEnd(live.lastSeenAt, live.expiresAt, sessionIdleMs) };
  },
  async signOut({ actor, mutate }) {
    const { sessionId } = sessionActor(actor);
    await mutate(async ({ tx, record }) => {
      await deleteSession(tx, actor.workspaceId, sessionId);
      record({ resourceType: 'staff_session', resourceId: sessionId, before: { staffUserId: actor.id, email: actor.label } });
    });
  },
  async changePassword({ input, actor, deps, mutate }) {
    sessionActor(actor);
    const found = await findStaffUser(deps.db, actor.workspaceId, actor.id);
    if (!found || !(await verifyPassword(input.currentPassword, found.passwordHash))) throw problem('forbidden', 'the current password is wrong');
    const passwordHash = await hashPassword(input.newPassword);
    await mutate(async ({ tx, record }) => {
      await setStaffPassword(tx, actor.workspaceId, actor.id, passwordHash);
      const ended = await deleteSessionsOfUser(tx, actor.workspaceId, actor.id);
      record({ resourceType: 'staff_user', resourceId: actor.id, after: { passwordChanged: true, sessionsEnded: ended } });
    });
  },
  async createInvitation({ input, actor, deps, mutate }) {
    if (!mayGrantRole(actor.scopes, input.role)) throw problem('forbidden', `you cannot invite to the role ${input.role}: it holds scopes you do not`);
    const settings = deps.settings.staff;
    const dashboardUrl = `${settings.publicUrl ?? ''}/dashboard`;
    return mutate(async ({ tx, record }) => {
      const request = { workspaceId: actor.workspaceId, email: input.email, role: input.role, invitedBy: actor.label, dashboardUrl, ttlMs: settings.invitationTtlMs };
      const created = await createInvitation(tx, request);
      const { token: _token, link: _link, ...invitation } = created;
      record({ resourceType: 'staff_invitation', resourceId: created.id, after: invitation });
      return created;
    });
  },
  async acceptInvitation({ input, deps, request }) {
    return withToken(await acceptInvitation(deps.db, deps.settings.staff, input, request, 'staffInvitations.accept'));
  },
  async listStaffUsers({ input, actor, deps }) {
    return listStaffUsers(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async updateStaffUser({ input, actor, deps, mutate }) {
    return mutate(async ({ tx, record }) => {
      // Owners are locked before the user (every owner-guarding call takes that order), so none deadlocks another.
      const owners = input.role ? await lockOwners(tx, actor.workspaceId) : [];
      const found = await findStaffUser(tx, actor.workspaceId, input.id, 'lock');
      if (!found) throw problem('not_found', 'no such staff user');
      const before = found.user;
      if (input.role && input.role !== before.role) {
        if (!mayGrantRole(actor.scopes, before.role) || !mayGrantRole(actor.scopes, input.role)) {
          throw problem('forbidden', `you cannot change a ${before.role} into a ${input.role}: one of them holds scopes you do not`);
        }
        if (before.role === 'owner') keepAnOwner(owners, before.id);
      }
      const after = await updateStaffUser(tx, actor.workspaceId, input.id, { role: input.role, name: input.name });
      record({ resourceType: 'staff_user', resourceId: before.id, before, after });
      return after!;
    });
  },
  async deleteStaffUser({ input, actor, mutate }) {
    await mutate(async ({ tx, record }) => {
      const owners = await lockOwners(tx, actor.workspaceId);
      const found = await findStaffUser(tx, actor.workspaceId, input.id, 'lock');
      if (!found) throw problem('not_found', 'no such staff user');
      if (!mayGrantRole(actor.scopes, found.user.role)) throw problem('forbidden', `you cannot remove a ${found.user.role}: that role holds scopes you do not`);
      if (found.user.role === 'owner') keepAnOwner(owners, found.user.id);
      await deleteStaffUser(tx, actor.workspaceId, input.id);
      record({ resourceType: 'staff_user', resourceId: found.user.id, before: found.user });
    });
  },
});

/** Refuses to demote or remove the last owner; `owners` were locked in this transaction, so two racing calls cannot both pass. */
function keepAnOwner(owners: readonly string[], leaving: string): void {
  if (owners.every((id) => id === leaving)) throw problem('conflict', 'the last owner of a workspace stays an owner; make another owner first');
}

export const staffOperatorHandlers = implement(staffOperatorContract, {
  async bootstrapOwner({ input, actor, deps, mutate }) {
    const present = existing({ outcome: 'present' as const });
    if (await staffEmailExists(deps.db, input.email)) return present;
    // Hashed before the transaction, so no row stays locked during scrypt.
    const passwordHash = await hashPassword(input.password);
    try {
      return await mutate(async ({ tx, record }) => {
        const user = await insertStaffUser(tx, { workspaceId: actor.workspaceId, email: input.email, role: 'owner', passwordHash });
        if (!user) throw problem('conflict', `a staff user with the email ${input.email} exists already`);
        record({ resourceType: 'staff_user', resourceId: user.id, after: user });
        return { outcome: 'created' as const };
      });
    } catch (error) {
      // Another process seeded the email between the look-up and the insert (both starting at once).
      if (error instanceof ProblemError && error.code === 'conflict') return present;
      throw error;
    }
  },
});
