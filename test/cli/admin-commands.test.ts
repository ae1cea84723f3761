// The admin CLI's commands and start-up's seeds run through the operation pipeline: each change leaves one audit entry
// naming its actor (`cli` and the OS user, or `system` for BOOTSTRAP_*) and the events its API route emits, even on
// a database without any key yet; no key, token or password reaches an entry or an event.
import { defaultServiceSettings } from '../../src/composition.js';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysCreate, runKeysRevoke, runStaffCreate, runWorkspacesCreate } from '../../src/cli/admin-commands.js';
import { loadConfig } from '../../src/config.js';
import { generateApiKey } from '../../src/domains/access/api-key-secret.js';
import { ensureDefaultWorkspace } from '../../src/domains/workspaces/index.js';
import type { Sql } from '../../src/platform/database.js';
import { createLogger } from '../../src/platform/logger.js';
import { prepareDatabase } from '../../src/runtime.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestService, type TestService } from '../support/service.js';
import { runCliProcess } from './cli-process.js';

const log = createLogger('silent');
const user = os.userInfo().username;
const cliActor = { actor_type: 'cli', actor_id: user, actor_label: `${user}@${os.hostname()} (CLI)` };

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

const configFor = (db: { url: string }, env: Record<string, string> = {}) => loadConfig({ DATABASE_URL: db.url, ...env });

async function entriesOf(db: Sql, operation: string) {
  const { rows } = await db.query<any>(
    `SELECT workspace_id, operation, actor_type, actor_id, actor_label, resource_type, resource_id, changes, request_id, user_agent
     FROM audit_entries WHERE operation = $1 ORDER BY created_at`,
    [operation],
  );
  return rows;
}

async function eventsOf(db: Sql, type: string) {
  return (await db.query<any>('SELECT workspace_id, type, payload FROM events WHERE type = $1 ORDER BY created_at', [type])).rows;
}

const countEvents = async (db: Sql) => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;

describe('operator commands through the pipeline', () => {
  it('`keys create` records apiKeys.create by the cli actor in the named workspace, with the api_key.created event the API emits', async () => {
    const { workspaceId, api } = await service.newWorkspace();
    const created = (await runKeysCreate(configFor(service.db), log, { name: 'checkout', scopes: 'vouchers:read,redemptions:write', workspace: workspaceId })) as any;
    expect(created).toMatchObject({ name: 'checkout', scopes: ['vouchers:read', 'redemptions:write'], key: expect.stringMatching(/^service_/) });
    expect((await service.api(created.key).get('/api/v1/vouchers')).status).toBe(200);

    const [entry] = (await entriesOf(service.pool, 'apiKeys.create')).filter((e) => e.resource_id === created.id);
    expect(entry).toMatchObject({ ...cliActor, workspace_id: workspaceId, resource_type: 'api_key', request_id: expect.stringMatching(/^cli-/) });
    expect(entry.user_agent).toMatch(/^promotions-cli\//);
    expect(entry.changes.after).toMatchObject({ id: created.id, name: 'checkout', prefix: created.prefix });

    const viaApi = await api.create('/api/v1/api-keys', { name: 'by the API', scopes: ['vouchers:read'] });
    const events = await eventsOf(service.pool, 'api_key.created');
    const fromCli = events.find((e) => e.payload.apiKeyId === created.id);
    const fromApi = events.find((e) => e.payload.apiKeyId === viaApi.id);
    expect(fromCli).toEqual({ workspace_id: workspaceId, type: 'api_key.created', payload: { apiKeyId: created.id, name: 'checkout', prefix: created.prefix, scopes: created.scopes } });
    expect(Object.keys(fromCli!.payload).sort()).toEqual(Object.keys(fromApi!.payload).sort());
    const secret = created.key.split('_')[2];
    expect(JSON.stringify([entry, events])).not.toContain(secret);
  });

  it('`keys revoke` records apiKeys.revoke by the cli actor in the key\'s workspace, with api_key.revoked; the key answers 401', async () => {
    const { workspaceId, api } = await service.newWorkspace();
    const doomed = await api.create('/api/v1/api-keys', { name: 'doomed', scopes: ['campaigns:read'] });
    expect(await runKeysRevoke(configFor(service.db), log, { id: doomed.id })).toEqual({ revoked: doomed.id });
    await expect.poll(async () => (await service.api(doomed.key).get('/api/v1/campaigns')).status, { timeout: 2_000 }).toBe(401);
    expect((await entriesOf(service.pool, 'apiKeys.revoke')).filter((e) => e.resource_id === doomed.id)).toMatchObject([
      { ...cliActor, workspace_id: workspaceId, resource_type: 'api_key', changes: { before: { id: doomed.id, name: 'doomed' } } },
    ]);
    expect((await eventsOf(service.pool, 'api_key.revoked')).filter((e) => e.payload.apiKeyId === doomed.id)).toEqual([
      { workspace_id: workspaceId, type: 'api_key.revoked', payload: { apiKeyId: doomed.id } },
    ]);
    await expect(runKeysRevoke(configFor(service.db), log, { id: doomed.id })).rejects.toThrow(/no active API key/);
    expect((await entriesOf(service.pool, 'apiKeys.revoke')).filter((e) => e.resource_id === doomed.id)).toHaveLength(1);
  });

  it('`workspaces create` records workspaces.create in the default workspace naming the new one, and emits what the API emits (nothing)', async () => {
    const before = await countEvents(service.pool);
    const acme = (await runWorkspacesCreate(configFor(service.db), log, { name: 'Acme by CLI' })) as any;
    expect((await service.api(acme.apiKey).get('/api/v1/workspace')).body).toMatchObject({ id: acme.id, name: 'Acme by CLI' });
    const defaultWorkspace = await ensureDefaultWorkspace(service.pool);
    expect((await entriesOf(service.pool, 'workspaces.create')).filter((e) => e.resource_id === acme.id)).toEqual([
      expect.objectContaining({ ...cliActor, workspace_id: defaultWorkspace.id, resource_type: 'workspace', changes: { after: { id: acme.id, name: 'Acme by CLI' } } }),
    ]);
    expect(await countEvents(service.pool)).toBe(before);
    expect((await (await service.adminApi()).post('/api/v1/workspaces', { name: 'Acme by API' })).status).toBe(201);
    expect(await countEvents(service.pool)).toBe(before);
    expect(JSON.stringify(await entriesOf(service.pool, 'workspaces.create'))).not.toContain(acme.apiKey.split('_')[2]);
  });

  it('`staff create` records staffInvitations.create by the cli actor, without the token or the link', async () => {
    const { workspaceId } = await service.newWorkspace();
    const invited = (await runStaffCreate(configFor(service.db), log, { email: 'Ops@Example.com', role: 'admin', workspace: workspaceId })) as any;
    expect(invited).toMatchObject({ email: 'ops@example.com', role: 'admin', link: expect.stringMatching(/^http:\/\/127\.0\.0\.1:3000\/dashboard\/#\/accept-invitation\//) });
    const entries = (await entriesOf(service.pool, 'staffInvitations.create')).filter((e) => e.resource_id === invited.id);
    expect(entries).toMatchObject([{ ...cliActor, workspace_id: workspaceId, resource_type: 'staff_invitation', changes: { after: { email: 'ops@example.com', role: 'admin' } } }]);
    const token = invited.link.split('/').pop();
    expect(JSON.stringify(entries)).not.toContain(token);
    // The operation's own checks apply: its schema refuses the address, and nothing is recorded.
    await expect(runStaffCreate(configFor(service.db), log, { email: 'ops@localhost', role: 'viewer', workspace: workspaceId })).rejects.toThrow(
      /^invalid_request: .*\(email: must be an email address\)$/,
    );
    expect((await entriesOf(service.pool, 'staffInvitations.create')).filter((e) => e.workspace_id === workspaceId)).toHaveLength(1);
  });

  it('prints the key once from the built CLI, and names an unknown workspace instead of failing in SQL', async () => {
    const printed = await runCliProcess(['keys', 'create', '--name', 'from a shell'], { DATABASE_URL: service.db.url, LOG_LEVEL: 'warn' });
    expect(printed.code).toBe(0);
    const key = JSON.parse(printed.stdout);
    expect((await entriesOf(service.pool, 'apiKeys.create')).filter((e) => e.resource_id === key.id)).toMatchObject([cliActor]);
    expect(printed.stderr).not.toContain(key.key.split('_')[2]);
    const unknown = await runCliProcess(['keys', 'create', '--name', 'x', '--workspace', '00000000-0000-4000-8000-000000000000'], { DATABASE_URL: service.db.url });
    expect(unknown).toMatchObject({ code: 2, stderr: 'no workspace with id 00000000-0000-4000-8000-000000000000\n' });
  });
});

describe('on a database without any key (bootstrap)', () => {
  let fresh: TestDatabase;
  beforeAll(async () => {
    fresh = await createTestDatabase();
  });
  afterAll(async () => fresh?.drop());

  it('creates a workspace, a staff invitation and a key with full authority, each audited as the cli actor', async () => {
    expect((await fresh.pool.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n).toBe(0);
    const acme = (await runWorkspacesCreate(configFor(fresh), log, { name: 'Acme' })) as any;
    await runStaffCreate(configFor(fresh), log, { email: 'first@example.com', role: 'owner', workspace: acme.id });
    const key = (await runKeysCreate(configFor(fresh), log, { name: 'admin' })) as any;
    expect(key.scopes).toEqual(['*', 'workspaces:admin']);
    const { rows } = await fresh.pool.query('SELECT operation, actor_type, actor_id FROM audit_entries ORDER BY created_at');
    expect(rows).toEqual([
      { operation: 'workspaces.create', actor_type: 'cli', actor_id: user },
      { operation: 'staffInvitations.create', actor_type: 'cli', actor_id: user },
      { operation: 'apiKeys.create', actor_type: 'cli', actor_id: user },
    ]);
    expect((await eventsOf(fresh.pool, 'api_key.created')).map((e) => e.payload.apiKeyId)).toEqual([key.id]);
  });
});

describe('start-up seeds', () => {
  let fresh: TestDatabase;
  beforeAll(async () => {
    fresh = await createTestDatabase();
  });
  afterAll(async () => fresh?.drop());

  it('seeds BOOTSTRAP_API_KEY and the bootstrap owner once each, audited as the system actor, the key with api_key.created', async () => {
    const bootstrap = generateApiKey();
    const config = configFor(fresh, { BOOTSTRAP_API_KEY: bootstrap.key, BOOTSTRAP_ADMIN_EMAIL: 'boss@example.com', BOOTSTRAP_ADMIN_PASSWORD: 'the boss password' });
    const { defaultWorkspaceId } = await prepareDatabase(fresh.pool, config, log, defaultServiceSettings());
    await prepareDatabase(fresh.pool, config, log, defaultServiceSettings());

    const keys = (await fresh.pool.query('SELECT id, name, scopes FROM api_keys')).rows;
    expect(keys).toEqual([{ id: expect.any(String), name: 'bootstrap', scopes: ['*', 'workspaces:admin'] }]);
    const system = { workspace_id: defaultWorkspaceId, actor_type: 'system', actor_id: 'system', request_id: expect.stringMatching(/^start-up-/) };
    expect(await entriesOf(fresh.pool, 'apiKeys.bootstrap')).toMatchObject([
      { ...system, actor_label: 'BOOTSTRAP_API_KEY', resource_type: 'api_key', resource_id: keys[0].id, changes: { after: { name: 'bootstrap', prefix: bootstrap.prefix } } },
    ]);
    expect(await eventsOf(fresh.pool, 'api_key.created')).toEqual([
      { workspace_id: defaultWorkspaceId, type: 'api_key.created', payload: { apiKeyId: keys[0].id, name: 'bootstrap', prefix: bootstrap.prefix, scopes: ['*', 'workspaces:admin'] } },
    ]);
    const owners = await entriesOf(fresh.pool, 'staffUsers.bootstrap');
    expect(owners).toMatchObject([{ ...system, actor_label: 'BOOTSTRAP_ADMIN_EMAIL', resource_type: 'staff_user', changes: { after: { email: 'boss@example.com', role: 'owner' } } }]);
    const everything = JSON.stringify([(await fresh.pool.query('SELECT * FROM audit_entries')).rows, (await fresh.pool.query('SELECT * FROM events')).rows]);
    expect(everything).not.toContain(bootstrap.secret);
    expect(everything).not.toContain('the boss password');
  });
});
