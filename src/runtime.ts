// Start-up steps of the web process and the CLI once they reached the database (composition.ts): migrate, seed access
// (through the operator face, as the system actor: audited, with events, like every other change).
import { systemActor } from './contract/actor.js';
import { ADMIN_SCOPES } from './contract/scopes.js';
import type { Config } from './config.js';
import type { ServiceSettings } from './contract/service-settings.js';
import { apiKeyOperatorContract, countActiveApiKeys } from './domains/access/index.js';
import { staffOperatorContract } from './domains/staff/index.js';
import { ensureDefaultWorkspace } from './domains/workspaces/index.js';
import { createCursorCodec, type CursorCodec } from './platform/cursor.js';
import { createPool, type Pool } from './platform/database.js';
import { startEmbeddedPostgres, type Supervision } from './platform/embedded-postgres.js';
import type { Logger } from './platform/logger.js';
import { migrate } from './platform/migrations.js';
import { packageVersion } from './platform/paths.js';
import { deriveKey, resolveSecretKey } from './platform/secret-key.js';
import { createOperatorFace, type OperatorFace } from './transports/operator-face.js';

/** Migrations, the default workspace and BOOTSTRAP_API_KEY (seeded through the operator face, with these settings). */
export async function prepareDatabase(pool: Pool, config: Config, log: Logger, settings: ServiceSettings): Promise<{ defaultWorkspaceId: string; hasApiKeys: boolean }> {
  await assertSupportedPostgres(pool);
  const applied = await migrate(pool);
  if (applied.length) log.info({ versions: applied }, 'migrations applied');
  const workspace = await ensureDefaultWorkspace(pool);
  if (config.bootstrapApiKey) {
    const outcome = await seedBootstrapApiKey(pool, log, settings, workspace.id, config.bootstrapApiKey);
    log.info({ outcome }, 'bootstrap API key checked');
  }
  if (config.bootstrapAdminEmail && config.bootstrapAdminPassword) {
    const outcome = await seedBootstrapOwner(pool, log, settings, workspace.id, config.bootstrapAdminEmail, config.bootstrapAdminPassword);
    log.info({ outcome, email: config.bootstrapAdminEmail }, 'bootstrap staff owner checked');
  }
  return { defaultWorkspaceId: workspace.id, hasApiKeys: (await countActiveApiKeys(pool)) > 0 };
}

function startUpFace(pool: Pool, log: Logger, settings: ServiceSettings): OperatorFace {
  return createOperatorFace({ db: pool, log, settings, source: 'start-up', userAgent: `promotions-service/${packageVersion}` });
}

/** BOOTSTRAP_API_KEY: created with every scope in the workspace unless its prefix exists (entry and api_key.created). */
export async function seedBootstrapApiKey(pool: Pool, log: Logger, settings: ServiceSettings, workspaceId: string, key: string): Promise<'created' | 'present'> {
  const actor = systemActor(workspaceId, 'BOOTSTRAP_API_KEY', ADMIN_SCOPES);
  return (await startUpFace(pool, log, settings).run(apiKeyOperatorContract.bootstrapApiKey, actor, { key })).outcome;
}

/** BOOTSTRAP_ADMIN_EMAIL / _PASSWORD: that owner in the workspace unless the email is staff anywhere already. */
export async function seedBootstrapOwner(pool: Pool, log: Logger, settings: ServiceSettings, workspaceId: string, email: string, password: string): Promise<'created' | 'present'> {
  const actor = systemActor(workspaceId, 'BOOTSTRAP_ADMIN_EMAIL');
  return (await startUpFace(pool, log, settings).run(staffOperatorContract.bootstrapOwner, actor, { email, password })).outcome;
}

const MINIMUM_SERVER_VERSION = 150000;

async function assertSupportedPostgres(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ server_version_num: string }>('SHOW server_version_num');
  const version = Number(rows[0]?.server_version_num);
  if (version < MINIMUM_SERVER_VERSION) {
    throw new Error(`PostgreSQL 15 or newer is required; this server is ${Math.floor(version / 10000)}`);
  }
}

export const FIRST_KEY_HINT = [
  '',
  'No API key exists yet. Create one (it is printed once) with:',
  '    npm run cli -- keys create --name admin',
  'or start with BOOTSTRAP_API_KEY=service_<12 letters/digits>_<40 letters/digits> to seed one.',
  '',
  '',
].join('\n');
