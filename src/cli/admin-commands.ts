// Operator commands that work on the database directly (no API key needed yet): migrate, keys, workspaces.
import type { Config } from '../config.js';
import { ADMIN_SCOPES, isScope } from '../contract/scopes.js';
import { createApiKey, revokeApiKeyById } from '../domains/access/index.js';

import { inviteStaffUser, STAFF_ROLES, type StaffRoleName } from '../domains/staff/index.js';
import { createWorkspace } from '../domains/workspaces/index.js';
import type { Logger } from '../platform/logger.js';
import { UsageError } from './operation-command.js';
import { openDatabase, prepareDatabase } from '../runtime.js';

export { UsageError };

async function withDatabase<T>(config: Config, log: Logger, work: (db: Awaited<ReturnType<typeof openDatabase>>, defaultWorkspaceId: string) => Promise<T>): Promise<T> {
  const database = await openDatabase(config, log, 2);
  try {
    const { defaultWorkspaceId } = await prepareDatabase(database.pool, config, log);
    return await work(database, defaultWorkspaceId);
  } finally {
    await database.close();
  }
}

function parseScopes(value: string | undefined): string[] {
  if (!value) return [...ADMIN_SCOPES];
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length || !scopes.length) throw new UsageError(`unknown scope(s): ${unknown.join(', ') || '(none given)'}`);
  return scopes;
}

export async function runMigrate(config: Config, log: Logger): Promise<unknown> {
  return withDatabase(config, log, async () => ({ migrated: true }));
}

export async function runKeysCreate(config: Config, log: Logger, options: { name?: string | undefined; scopes?: string | undefined; workspace?: string | undefined }) {
  if (!options.name) throw new UsageError('keys create needs --name <name>');
  const scopes = parseScopes(options.scopes);
  return withDatabase(config, log, (db, defaultWorkspaceId) =>
    createApiKey(db.pool, { workspaceId: options.workspace ?? defaultWorkspaceId, name: options.name!, scopes }),
  );
}

export async function runKeysRevoke(config: Config, log: Logger, options: { id?: string | undefined }) {
  if (!options.id) throw new UsageError('keys revoke needs the key id');
  return withDatabase(config, log, async (db) => {
    if (!(await revokeApiKeyById(db.pool, options.id!))) throw new UsageError(`no active API key with id ${options.id}`);
    return { revoked: options.id };
  });
}

export async function runWorkspacesCreate(config: Config, log: Logger, options: { name?: string | undefined }) {
  if (!options.name) throw new UsageError('workspaces create needs --name <name>');
  return withDatabase(config, log, (db) => createWorkspace(db.pool, options.name!));
}

/** An invitation made on the database; its link (holding the one-time token) is printed once. */
export async function runStaffCreate(config: Config, log: Logger, options: { email?: string | undefined; role?: string | undefined; workspace?: string | undefined }) {
  if (!options.email || !/^[^@\s]+@[^@\s]+$/.test(options.email)) throw new UsageError('staff create needs --email <address>');
  if (!(STAFF_ROLES as readonly string[]).includes(options.role ?? '')) throw new UsageError(`staff create needs --role ${STAFF_ROLES.join('|')}`);
  const dashboardUrl = `${config.publicUrl ?? `http://127.0.0.1:${config.port}`}/dashboard`;
  return withDatabase(config, log, async (db, defaultWorkspaceId) => {
    const created = await inviteStaffUser(db.pool, {
      workspaceId: options.workspace ?? defaultWorkspaceId,
      email: options.email!,
      role: options.role as StaffRoleName,
      dashboardUrl,
      ttlMs: config.staffInvitationTtlMs,
    });
    return { id: created.id, email: created.email, role: created.role, expiresAt: created.expiresAt, link: created.link };
  });
}
