// Sign-ins, sign-outs and failed sign-ins in the audit log, changes made through a session naming the staff user,
// no password or token in any entry or log line; the bootstrap owner and the CLI's invitation.
import { defaultServiceSettings } from '../../src/composition.js';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runStaffCreate } from '../../src/cli/admin-commands.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/platform/logger.js';
import { prepareDatabase } from '../../src/runtime.js';
import { startTestService, type TestService } from '../support/service.js';
import { cookieOf, PASSWORD, send, signIn, staffUser, useStaffSettings } from './staff-support.js';

let service: TestService;
let key: string;
let workspaceId: string;
const logLines: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  service = await startTestService({ log: createLogger('trace', sink) });
  ({ key, workspaceId } = await service.newWorkspace());
});
afterAll(async () => service?.close());
beforeEach(() => useStaffSettings(service));

async function entries(where: string, params: unknown[]) {
  return (await service.pool.query(`SELECT operation, actor_type, actor_id, actor_label, resource_type, changes, request_id, ip FROM audit_entries WHERE ${where} ORDER BY created_at`, params)).rows;
}

describe('the audit log of sessions', () => {
  it('records a sign-in, a failed sign-in (actor: the email tried) and a sign-out, with the request id', async () => {
    const user = await staffUser(service, key, 'member');
    const failed = await signIn(service, user.email, 'a wrong password');
    const ok = await signIn(service, user.email);
    const out = await send(service, 'DELETE', '/sessions/current', { headers: { cookie: ok.cookie!, origin: service.baseUrl } });
    expect(out.status).toBe(204);
    const failedEntries = await entries('request_id = $1', [failed.headers.get('x-request-id')]);
    expect(failedEntries).toMatchObject([{ operation: 'sessions.create', actor_type: 'system', actor_label: user.email, resource_type: 'staff_session', changes: { after: { outcome: 'refused' } } }]);
    expect(failedEntries[0].ip).toBeTruthy();
    expect(await entries('request_id = $1', [ok.headers.get('x-request-id')])).toMatchObject([
      { operation: 'sessions.create', actor_type: 'staff_user', actor_id: user.id, actor_label: user.email, resource_type: 'staff_session' },
    ]);
    expect(await entries('request_id = $1', [out.headers.get('x-request-id')])).toMatchObject([
      { operation: 'sessions.delete', actor_type: 'staff_user', actor_id: user.id, actor_label: user.email },
    ]);
    const unknown = await signIn(service, 'stranger@example.com', 'a wrong password');
    expect(await entries('request_id = $1', [unknown.headers.get('x-request-id')])).toMatchObject([{ actor_type: 'system', actor_label: 'stranger@example.com' }]);
  });

  it('names the staff user on a change made through its session, readable in GET /audit-log', async () => {
    const owner = await staffUser(service, key, 'owner');
    const made = await owner.browser.post('/campaigns', { name: 'by a person', type: 'DISCOUNT_COUPONS' });
    expect(made.status).toBe(201);
    const log = await owner.browser.get(`/audit-log?resourceId=${made.body.id}`);
    expect(log.status).toBe(200);
    expect(log.body.data).toMatchObject([{ operation: 'campaigns.create', actor: { type: 'staff_user', id: owner.id, label: owner.email } }]);
    const byActor = await owner.browser.get(`/audit-log?actorType=staff_user&actorId=${owner.id}`);
    expect(byActor.body.data.map((e: any) => e.operation)).toContain('campaigns.create');
  });

  it('never writes a password, session token or invitation token to an entry or a log line', async () => {
    const invited = await send(service, 'POST', '/staff-invitations', { body: { email: `secret-${Date.now()}@example.com`, role: 'admin' }, headers: { authorization: `Bearer ${key}` } });
    const accepted = await send(service, 'POST', '/staff-invitations/accept', { body: { token: invited.body.token, password: 'the invited password' } });
    const sessionToken = cookieOf(accepted)!.split('=')[1]!;
    await send(service, 'PUT', '/sessions/current/password', {
      body: { currentPassword: 'the invited password', newPassword: 'the changed password' },
      headers: { cookie: cookieOf(accepted)!, origin: service.baseUrl },
    });
    const signedIn = await signIn(service, invited.body.email, 'the changed password');
    await signIn(service, invited.body.email, 'a guessed password');
    const secrets = ['the invited password', 'the changed password', 'a guessed password', PASSWORD, invited.body.token, sessionToken, signedIn.cookie!.split('=')[1]!];
    const all = JSON.stringify((await service.pool.query('SELECT * FROM audit_entries WHERE workspace_id = $1', [workspaceId])).rows);
    expect(all).toContain('staffInvitations.accept');
    expect(all).toContain('sessions.changePassword');
    const events = JSON.stringify((await service.pool.query('SELECT * FROM events')).rows);
    const sessions = JSON.stringify((await service.pool.query('SELECT * FROM staff_sessions')).rows);
    const logs = logLines.join('');
    expect(logs).toContain('sessions');
    for (const value of secrets) {
      expect(all).not.toContain(value);
      expect(events).not.toContain(value);
      expect(sessions).not.toContain(value);
      expect(logs).not.toContain(value);
    }
  });
});

describe('start-up and the CLI', () => {
  it('creates the bootstrap owner once, who can sign in', async () => {
    const config = loadConfig({ DATABASE_URL: service.db.url, BOOTSTRAP_ADMIN_EMAIL: 'Boss@Example.com', BOOTSTRAP_ADMIN_PASSWORD: 'bootstrap password' });
    const log = createLogger('silent');
    await prepareDatabase(service.pool, config, log, defaultServiceSettings());
    await prepareDatabase(service.pool, config, log, defaultServiceSettings());
    const { rows } = await service.pool.query(`SELECT role, password_hash FROM staff_users WHERE email = 'boss@example.com'`);
    expect(rows).toHaveLength(1);
    expect(rows[0].role).toBe('owner');
    expect(rows[0].password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    const answer = await signIn(service, 'boss@example.com', 'bootstrap password');
    expect(answer.status).toBe(201);
    expect(answer.body.staffUser.scopes).toEqual(['*']);
  });

  it('refuses a bootstrap password shorter than 12 characters', () => {
    expect(() => loadConfig({ BOOTSTRAP_ADMIN_EMAIL: 'a@b.co', BOOTSTRAP_ADMIN_PASSWORD: 'short' })).toThrow(/BOOTSTRAP_ADMIN_PASSWORD must be at least 12 characters$/);
  });

  it('`staff create` prints a one-time link that accepts the invitation', async () => {
    const config = loadConfig({ DATABASE_URL: service.db.url, PUBLIC_URL: 'https://promo.example.com/' });
    const printed = await runStaffCreate(config, createLogger('silent'), { email: 'cli@example.com', role: 'viewer' });
    expect(printed).toMatchObject({ email: 'cli@example.com', role: 'viewer' });
    const token = /^https:\/\/promo\.example\.com\/dashboard\/#\/accept-invitation\/([A-Za-z0-9_-]{43})$/.exec(printed.link)?.[1];
    expect(token).toBeTruthy();
    const accepted = await send(service, 'POST', '/staff-invitations/accept', { body: { token, password: 'from the command line' } });
    expect(accepted.status).toBe(201);
    await expect(runStaffCreate(config, createLogger('silent'), { email: 'cli@example.com', role: 'boss' })).rejects.toThrow(/--role/);
  });
});
