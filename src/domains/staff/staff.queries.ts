// SQL of staff_users, staff_sessions and staff_invitations: parameterized, explicit columns, one mapper per row type.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import { scopesOfRole, type StaffRoleName } from './staff-role.rules.js';
import type { StaffInvitation, StaffUser } from './staff.schemas.js';

const USER_COLUMNS = 'id, workspace_id, email, name, role, created_at';

interface StaffUserRow {
  [column: string]: unknown;
  id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  role: StaffRoleName;
  created_at: Date;
}

function toStaffUser(row: StaffUserRow): StaffUser {
  return {
    id: row.id,
    email: row.email,
    ...(row.name ? { name: row.name } : {}),
    role: row.role,
    workspaceId: row.workspace_id,
    scopes: [...scopesOfRole(row.role)],
    createdAt: row.created_at.toISOString(),
  };
}

export async function insertStaffUser(
  db: Sql,
  user: { workspaceId: string; email: string; name?: string | undefined; role: StaffRoleName; passwordHash: string },
): Promise<StaffUser | undefined> {
  const { rows } = await db.query<StaffUserRow>(
    `INSERT INTO staff_users (workspace_id, email, name, role, password_hash) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (email) DO NOTHING RETURNING ${USER_COLUMNS}`,
    [user.workspaceId, user.email, user.name ?? null, user.role, user.passwordHash],
  );
  return rows[0] && toStaffUser(rows[0]);
}

/** For signing in: the user of an email in any workspace, with its password hash. */
export async function findStaffUserByEmail(db: Sql, email: string): Promise<{ user: StaffUser; passwordHash: string } | undefined> {
  const { rows } = await db.query<StaffUserRow & { password_hash: string }>(
    `SELECT ${USER_COLUMNS}, password_hash FROM staff_users WHERE email = $1`,
    [email],
  );
  return rows[0] && { user: toStaffUser(rows[0]), passwordHash: rows[0].password_hash };
}

export async function findStaffUser(db: Sql, workspaceId: string, id: string, lock: 'lock' | 'read' = 'read'): Promise<{ user: StaffUser; passwordHash: string } | undefined> {
  const { rows } = await db.query<StaffUserRow & { password_hash: string }>(
    `SELECT ${USER_COLUMNS}, password_hash FROM staff_users WHERE workspace_id = $1 AND id = $2 ${lock === 'lock' ? 'FOR UPDATE' : ''}`,
    [workspaceId, id],
  );
  return rows[0] && { user: toStaffUser(rows[0]), passwordHash: rows[0].password_hash };
}

/** Whether a staff user has the email: in the given workspace, or (no workspace given) in any. */
export async function staffEmailExists(db: Sql, email: string, workspaceId?: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM staff_users WHERE email = $1 AND ($2::uuid IS NULL OR workspace_id = $2)', [email, workspaceId ?? null]);
  return (rowCount ?? 0) > 0;
}

export function listStaffUsers(db: Sql, cursors: CursorCodec, workspaceId: string, page: PageRequest) {
  return keysetPage<StaffUserRow, StaffUser>(
    db,
    cursors,
    { list: 'staffUsers.list', from: 'staff_users', columns: USER_COLUMNS, where: ['workspace_id = $1'], params: [workspaceId], map: toStaffUser },
    page,
  );
}

export async function updateStaffUser(db: Sql, workspaceId: string, id: string, change: { role?: StaffRoleName | undefined; name?: string | undefined }): Promise<StaffUser | undefined> {
  const { rows } = await db.query<StaffUserRow>(
    `UPDATE staff_users SET role = coalesce($3, role), name = coalesce($4, name), updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${USER_COLUMNS}`,
    [workspaceId, id, change.role ?? null, change.name ?? null],
  );
  return rows[0] && toStaffUser(rows[0]);
}

export async function setStaffPassword(db: Sql, workspaceId: string, id: string, passwordHash: string): Promise<void> {
  await db.query('UPDATE staff_users SET password_hash = $3, password_changed_at = now(), updated_at = now() WHERE workspace_id = $1 AND id = $2', [workspaceId, id, passwordHash]);
}

/** Removes the user; its sessions go with it (ON DELETE CASCADE). */
export async function deleteStaffUser(db: Sql, workspaceId: string, id: string): Promise<void> {
  await db.query('DELETE FROM staff_users WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
}

/**
 * Locks the workspace's owners (in id order, so two demotions cannot deadlock) and counts them: the guard that keeps
 * one owner, taken inside the transaction that would demote or remove one.
 */
export async function lockOwners(db: Sql, workspaceId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM staff_users WHERE workspace_id = $1 AND role = 'owner' ORDER BY id FOR UPDATE`,
    [workspaceId],
  );
  return rows.map((r) => r.id);
}

// ---- sessions

export interface LiveSession {
  id: string;
  user: StaffUser;
  expiresAt: Date;
  lastSeenAt: Date;
}

export async function insertSession(db: Sql, session: { workspaceId: string; staffUserId: string; tokenHash: Buffer; maxAgeMs: number }): Promise<{ id: string; createdAt: Date; expiresAt: Date }> {
  const { rows } = await db.query<{ id: string; created_at: Date; expires_at: Date }>(
    `INSERT INTO staff_sessions (workspace_id, staff_user_id, token_hash, expires_at)
     VALUES ($1, $2, $3, now() + $4::int8 * interval '1 millisecond') RETURNING id, created_at, expires_at`,
    [session.workspaceId, session.staffUserId, session.tokenHash, session.maxAgeMs],
  );
  const row = rows[0]!;
  return { id: row.id, createdAt: row.created_at, expiresAt: row.expires_at };
}

/** The live session of a token hash: before its absolute end and used within the idle time. */
export async function findLiveSession(db: Sql, tokenHash: Buffer, idleMs: number): Promise<LiveSession | undefined> {
  const { rows } = await db.query<StaffUserRow & { session_id: string; expires_at: Date; last_seen_at: Date }>(
    `SELECT s.id AS session_id, s.expires_at, s.last_seen_at, u.id, u.workspace_id, u.email, u.name, u.role, u.created_at
     FROM staff_sessions s JOIN staff_users u ON u.id = s.staff_user_id AND u.workspace_id = s.workspace_id
     WHERE s.token_hash = $1 AND s.expires_at > now() AND s.last_seen_at > now() - $2::int8 * interval '1 millisecond'`,
    [tokenHash, idleMs],
  );
  const row = rows[0];
  return row && { id: row.session_id, user: toStaffUser(row), expiresAt: row.expires_at, lastSeenAt: row.last_seen_at };
}

export async function findLiveSessionById(db: Sql, workspaceId: string, id: string, idleMs: number): Promise<LiveSession | undefined> {
  const { rows } = await db.query<StaffUserRow & { session_id: string; expires_at: Date; last_seen_at: Date }>(
    `SELECT s.id AS session_id, s.expires_at, s.last_seen_at, u.id, u.workspace_id, u.email, u.name, u.role, u.created_at
     FROM staff_sessions s JOIN staff_users u ON u.id = s.staff_user_id AND u.workspace_id = s.workspace_id
     WHERE s.workspace_id = $1 AND s.id = $2 AND s.expires_at > now() AND s.last_seen_at > now() - $3::int8 * interval '1 millisecond'`,
    [workspaceId, id, idleMs],
  );
  const row = rows[0];
  return row && { id: row.session_id, user: toStaffUser(row), expiresAt: row.expires_at, lastSeenAt: row.last_seen_at };
}

/** Refreshed at most once a minute per session, so a busy dashboard does not write on every call. */
export async function touchSession(db: Sql, workspaceId: string, id: string): Promise<void> {
  await db.query(
    `UPDATE staff_sessions SET last_seen_at = now() WHERE workspace_id = $1 AND id = $2 AND last_seen_at < now() - interval '1 minute'`,
    [workspaceId, id],
  );
}

/** A user's ended sessions (idle or past their end), removed at its next sign-in so the table does not grow. */
export async function deleteEndedSessions(db: Sql, workspaceId: string, staffUserId: string, idleMs: number): Promise<void> {
  await db.query(
    `DELETE FROM staff_sessions WHERE workspace_id = $1 AND staff_user_id = $2
       AND (expires_at <= now() OR last_seen_at <= now() - $3::int8 * interval '1 millisecond')`,
    [workspaceId, staffUserId, idleMs],
  );
}

export async function deleteSession(db: Sql, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM staff_sessions WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return (rowCount ?? 0) > 0;
}

export async function deleteSessionsOfUser(db: Sql, workspaceId: string, staffUserId: string): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM staff_sessions WHERE workspace_id = $1 AND staff_user_id = $2', [workspaceId, staffUserId]);
  return rowCount ?? 0;
}

// ---- invitations

const INVITATION_COLUMNS = 'id, workspace_id, email, role, created_at, expires_at';

interface InvitationRow {
  [column: string]: unknown;
  id: string;
  workspace_id: string;
  email: string;
  role: StaffRoleName;
  created_at: Date;
  expires_at: Date;
}

function toInvitation(row: InvitationRow): StaffInvitation {
  return { id: row.id, email: row.email, role: row.role, createdAt: row.created_at.toISOString(), expiresAt: row.expires_at.toISOString() };
}

export async function insertInvitation(
  db: Sql,
  invitation: { workspaceId: string; email: string; role: StaffRoleName; tokenHash: Buffer; invitedBy: string; ttlMs: number },
): Promise<StaffInvitation> {
  const { rows } = await db.query<InvitationRow>(
    `INSERT INTO staff_invitations (workspace_id, email, role, token_hash, invited_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + $6::int8 * interval '1 millisecond') RETURNING ${INVITATION_COLUMNS}`,
    [invitation.workspaceId, invitation.email, invitation.role, invitation.tokenHash, invitation.invitedBy, invitation.ttlMs],
  );
  return toInvitation(rows[0]!);
}

/** Marks an open, unexpired invitation accepted (once: the guard `accepted_at IS NULL`); undefined when it is not. */
export async function takeInvitation(db: Sql, tokenHash: Buffer): Promise<StaffInvitation & { workspaceId: string } | undefined> {
  const { rows } = await db.query<InvitationRow>(
    `UPDATE staff_invitations SET accepted_at = now()
     WHERE token_hash = $1 AND accepted_at IS NULL AND expires_at > now() RETURNING ${INVITATION_COLUMNS}`,
    [tokenHash],
  );
  return rows[0] && { ...toInvitation(rows[0]), workspaceId: rows[0].workspace_id };
}

export async function linkInvitation(db: Sql, workspaceId: string, id: string, staffUserId: string): Promise<void> {
  await db.query('UPDATE staff_invitations SET staff_user_id = $3 WHERE workspace_id = $1 AND id = $2', [workspaceId, id, staffUserId]);
}
