// Operator commands on the database (no API key needed yet): migrate, keys, workspaces, staff. Each change runs through
// the operation pipeline (transports/operator-face.ts) as the `cli` actor, with its audit entry and events.
import os from 'node:os';
import { cliActor, type Actor } from '../contract/actor.js';
import { ProblemError } from '../contract/problems.js';
import { ADMIN_SCOPES, isScope } from '../contract/scopes.js';
import type { Config } from '../config.js';
import { apiKeyContract, findActiveApiKeyWorkspace } from '../domains/access/index.js';
import { staffContract, STAFF_ROLES, type StaffRoleName } from '../domains/staff/index.js';
import { compose } from '../composition.js';
import type { StaffSettingsInput } from '../domains/staff/index.js';
import { findWorkspace, workspaceContract } from '../domains/workspaces/index.js';
import type { Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';
import { packageVersion } from '../platform/paths.js';
import { createOperatorFace, type OperatorFace } from '../transports/operator-face.js';
import { UsageError } from './operation-command.js';
import { prepareDatabase } from '../runtime.js';

export { UsageError };

interface Operator {
  pool: Pool;
  face: OperatorFace;
  defaultWorkspaceId: string;
  /** The CLI's actor in a workspace: the OS user at this host. */
  actorIn(workspaceId: string): Actor;
}

/** The OS user running the command; `operator` where the system has no name for it (a container's bare uid). */
function operatorName(): { user: string; host: string } {
  let user = 'operator';
  try {
    user = os.userInfo().username || user;
  } catch {
    // No passwd entry for this uid.
  }
  return { user, host: os.hostname() };
}

async function withOperator<T>(config: Config, log: Logger, work: (operator: Operator) => Promise<T>, staff: Partial<StaffSettingsInput> = {}): Promise<T> {
  const { database, settings } = await compose(config, log, 'cli', { staff });
  try {
    const { defaultWorkspaceId } = await prepareDatabase(database.pool, config, log, settings);
    const face = createOperatorFace({ db: database.pool, log, settings, source: 'cli', userAgent: `promotions-cli/${packageVersion}` });
    const name = operatorName();
    return await work({ pool: database.pool, face, defaultWorkspaceId, actorIn: (workspaceId) => cliActor(workspaceId, name) }).catch(refusal);
  } finally {
    await database.close();
  }
}

/** A refused operation (its problem) as one line naming the fields at fault. */
function refusal(error: unknown): never {
  if (!(error instanceof ProblemError)) throw error;
  const fields = (error.errors ?? []).map((e) => `${e.path}: ${e.message}`).join('; ');
  throw new Error(`${error.code}: ${error.message}${fields ? ` (${fields})` : ''}`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function workspaceOf(operator: Operator, id: string | undefined): Promise<string> {
  if (id === undefined) return operator.defaultWorkspaceId;
  if (!UUID.test(id) || !(await findWorkspace(operator.pool, id))) throw new UsageError(`no workspace with id ${id}`);
  return id;
}

function parseScopes(value: string | undefined): string[] {
  if (!value) return [...ADMIN_SCOPES];
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length || !scopes.length) throw new UsageError(`unknown scope(s): ${unknown.join(', ') || '(none given)'}`);
  return scopes;
}

export async function runMigrate(config: Config, log: Logger): Promise<unknown> {
  return withOperator(config, log, async () => ({ migrated: true }));
}

export async function runKeysCreate(config: Config, log: Logger, options: { name?: string | undefined; scopes?: string | undefined; workspace?: string | undefined }) {
  const name = options.name;
  if (!name) throw new UsageError('keys create needs --name <name>');
  const scopes = parseScopes(options.scopes);
  return withOperator(config, log, async (operator) => {
    const actor = operator.actorIn(await workspaceOf(operator, options.workspace));
    return operator.face.run(apiKeyContract.createApiKey, actor, { name, scopes });
  });
}

/** Revokes the key in whichever workspace it lives: the CLI acts in that workspace. */
export async function runKeysRevoke(config: Config, log: Logger, options: { id?: string | undefined }) {
  const id = options.id;
  if (!id) throw new UsageError('keys revoke needs the key id');
  return withOperator(config, log, async (operator) => {
    const workspaceId = await findActiveApiKeyWorkspace(operator.pool, id);
    if (!workspaceId) throw new UsageError(`no active API key with id ${id}`);
    await operator.face.run(apiKeyContract.revokeApiKey, operator.actorIn(workspaceId), { id });
    return { revoked: id };
  });
}

/** The entry goes to the default workspace (the CLI's own, as a key's workspace is the API caller's) and names the new one. */
export async function runWorkspacesCreate(config: Config, log: Logger, options: { name?: string | undefined }) {
  const name = options.name;
  if (!name) throw new UsageError('workspaces create needs --name <name>');
  return withOperator(config, log, (operator) => operator.face.run(workspaceContract.createWorkspace, operator.actorIn(operator.defaultWorkspaceId), { name }));
}

/** An invitation as staffInvitations.create makes it; its link (holding the one-time token) is printed once. */
export async function runStaffCreate(config: Config, log: Logger, options: { email?: string | undefined; role?: string | undefined; workspace?: string | undefined }) {
  const email = options.email;
  if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError('staff create needs --email <address>');
  const role = options.role as StaffRoleName;
  if (!STAFF_ROLES.includes(role)) throw new UsageError(`staff create needs --role ${STAFF_ROLES.join('|')}`);
  // The link leads to PUBLIC_URL's dashboard, else to the one this machine serves on PORT.
  const publicUrl = config.publicUrl ?? `http://127.0.0.1:${config.port}`;
  return withOperator(
    config,
    log,
    async (operator) => {
      const actor = operator.actorIn(await workspaceOf(operator, options.workspace));
      const created = await operator.face.run(staffContract.createInvitation, actor, { email, role });
      return { id: created.id, email: created.email, role: created.role, expiresAt: created.expiresAt, link: created.link };
    },
    { publicUrl },
  );
}
