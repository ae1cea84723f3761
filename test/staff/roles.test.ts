// Roles as scopes, enforced on the server for staff as for keys: what each role may do through its cookie, who may
// grant which role or key scope, and the staff users API (a role change takes effect at once, removal ends sessions,
// the last owner stays).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ALL_SCOPES, hasScope, type Scope } from '../../src/contract/scopes.js';
import { scopesOfRole } from '../../src/domains/staff/index.js';
import { startTestService, type TestService } from '../support/service.js';
import { send, staffUser, useStaffSettings } from './staff-support.js';

let service: TestService;
let key: string;

beforeAll(async () => {
  service = await startTestService();
  key = (await service.newWorkspace()).key;
});
afterAll(async () => service?.close());
beforeEach(() => useStaffSettings(service));

const granted = (role: Parameters<typeof scopesOfRole>[0]) =>
  ALL_SCOPES.filter((s) => s !== '*' && s !== 'workspaces:admin' && hasScope(scopesOfRole(role), s as Scope)).sort();

describe('roles as scopes', () => {
  it('maps each role to the scopes of the contract', () => {
    expect(scopesOfRole('owner')).toEqual(['*']);
    const groups = ['campaigns', 'vouchers', 'redemptions', 'customers', 'orders', 'segments', 'loyalty', 'referrals', 'rules', 'events', 'webhooks', 'insights', 'api-keys', 'audit', 'workspaces'];
    expect(granted('admin')).toEqual(groups.flatMap((g) => (g === 'audit' ? ['audit:read'] : [`${g}:read`, `${g}:write`])).sort());
    const memberWrites = ['campaigns', 'vouchers', 'redemptions', 'customers', 'orders', 'segments', 'loyalty', 'referrals', 'rules'];
    expect(granted('member')).toEqual([...memberWrites.flatMap((g) => [`${g}:read`, `${g}:write`]), 'events:read', 'webhooks:read', 'insights:read'].sort());
    expect(granted('viewer')).toEqual(groups.filter((g) => g !== 'api-keys' && g !== 'audit').map((g) => `${g}:read`).sort());
    for (const role of ['admin', 'member', 'viewer'] as const) expect(hasScope(scopesOfRole(role), 'workspaces:admin')).toBe(false);
  });

  it('lets a viewer read but not write, nor see API keys or the audit log', async () => {
    const viewer = await staffUser(service, key, 'viewer');
    expect((await viewer.browser.get('/campaigns')).status).toBe(200);
    expect((await viewer.browser.get('/webhooks')).status).toBe(200);
    const write = await viewer.browser.post('/campaigns', { name: 'nope', type: 'DISCOUNT_COUPONS' });
    expect(write.status).toBe(403);
    expect(write.body.detail).toContain('campaigns:write');
    expect((await viewer.browser.get('/api-keys')).status).toBe(403);
    expect((await viewer.browser.get('/audit-log')).status).toBe(403);
    expect((await viewer.browser.post('/staff-invitations', { email: 'x@example.com', role: 'viewer' })).status).toBe(403);
  });

  it('lets a member write campaigns but only read webhooks, and not touch keys', async () => {
    const member = await staffUser(service, key, 'member');
    expect((await member.browser.post('/campaigns', { name: 'member made', type: 'DISCOUNT_COUPONS' })).status).toBe(201);
    expect((await member.browser.get('/webhooks')).status).toBe(200);
    expect((await member.browser.post('/webhooks', { url: 'https://example.com/hook', events: '*' })).status).toBe(403);
    expect((await member.browser.post('/api-keys', { name: 'k', scopes: ['campaigns:read'] })).status).toBe(403);
    expect((await member.browser.get('/audit-log')).status).toBe(403);
  });

  it('lets an admin read the audit log and create keys only with scopes it holds', async () => {
    const admin = await staffUser(service, key, 'admin');
    expect((await admin.browser.get('/audit-log')).status).toBe(200);
    const everything = await admin.browser.post('/api-keys', { name: 'all', scopes: ['*'] });
    expect(everything.status).toBe(403);
    expect((await admin.browser.post('/api-keys', { name: 'admin', scopes: ['workspaces:admin'] })).status).toBe(403);
    const reader = await admin.browser.post('/api-keys', { name: 'reader', scopes: ['campaigns:read', 'vouchers:write'] });
    expect(reader.status).toBe(201);
    expect((await admin.browser.post('/workspaces', { name: 'another' })).status).toBe(403);
  });
});

describe('invitations', () => {
  it('shows the token once, stores only its hash, and signs the new user in on acceptance', async () => {
    const email = `new-${Date.now()}@example.com`;
    const invited = await send(service, 'POST', '/staff-invitations', { body: { email: email.toUpperCase(), role: 'member' }, headers: { authorization: `Bearer ${key}` } });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ email, role: 'member' });
    expect(invited.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(invited.body.link).toBe(`/dashboard/#/accept-invitation/${invited.body.token}`);
    const stored = await service.pool.query('SELECT * FROM staff_invitations WHERE id = $1', [invited.body.id]);
    expect(JSON.stringify(stored.rows)).not.toContain(invited.body.token);
    const accepted = await send(service, 'POST', '/staff-invitations/accept', { body: { token: invited.body.token, password: 'twelve chars!!', name: 'Ada' } });
    expect(accepted.status).toBe(201);
    expect(accepted.body.staffUser).toMatchObject({ email, role: 'member', name: 'Ada' });
    expect(accepted.headers.get('set-cookie')).toMatch(/^promotions_session=.+HttpOnly/);
  });

  it('refuses a used, expired or unknown token and a short password, creating nothing', async () => {
    const invite = async (email: string) =>
      (await send(service, 'POST', '/staff-invitations', { body: { email, role: 'viewer' }, headers: { authorization: `Bearer ${key}` } })).body;
    const accept = (token: string, password = 'long enough password') => send(service, 'POST', '/staff-invitations/accept', { body: { token, password } });
    const count = async () => (await service.pool.query('SELECT count(*)::int AS n FROM staff_users')).rows[0].n;

    const short = await invite(`short-${Date.now()}@example.com`);
    const before = await count();
    expect((await accept(short.token, 'eleven char')).status).toBe(400);
    expect(await count()).toBe(before);
    expect((await accept(short.token)).status).toBe(201);
    const again = await accept(short.token);
    expect(again.status).toBe(400);
    expect(again.body.detail).toContain('unknown, used or expired');

    const expired = await invite(`late-${Date.now()}@example.com`);
    await service.pool.query(`UPDATE staff_invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.id]);
    const countBefore = await count();
    expect((await accept(expired.token)).status).toBe(400);
    expect((await accept('A'.repeat(43))).status).toBe(400);
    expect(await count()).toBe(countBefore);
  });

  it('lets exactly one of many racing acceptances of a token through', async () => {
    const invited = (await send(service, 'POST', '/staff-invitations', { body: { email: `race-${Date.now()}@example.com`, role: 'viewer' }, headers: { authorization: `Bearer ${key}` } })).body;
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => send(service, 'POST', '/staff-invitations/accept', { body: { token: invited.token, password: 'long enough password' } })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 400)).toHaveLength(11);
    expect((await service.pool.query('SELECT count(*)::int AS n FROM staff_users WHERE email = $1', [invited.email])).rows[0].n).toBe(1);
  });

  it('refuses to invite an existing email (409) or to a role the inviter does not fully hold (403)', async () => {
    const admin = await staffUser(service, key, 'admin');
    expect((await admin.browser.post('/staff-invitations', { email: admin.email, role: 'viewer' })).status).toBe(409);
    expect((await admin.browser.post('/staff-invitations', { email: 'boss@example.com', role: 'owner' })).status).toBe(403);
    expect((await admin.browser.post('/staff-invitations', { email: `adm-${Date.now()}@example.com`, role: 'admin' })).status).toBe(201);
    expect((await admin.browser.post('/staff-invitations', { email: 'bad', role: 'viewer' })).status).toBe(400);
    expect((await admin.browser.post('/staff-invitations', { email: 'ok@example.com', role: 'god' })).status).toBe(400);
  });

  it('invites an email that is staff in another workspace like any other (no answer tells), and refuses it only at acceptance', async () => {
    const elsewhere = await staffUser(service, (await service.newWorkspace()).key, 'viewer');
    const fresh = await send(service, 'POST', '/staff-invitations', { body: { email: `new-${Date.now()}@example.com`, role: 'viewer' }, headers: { authorization: `Bearer ${key}` } });
    const taken = await send(service, 'POST', '/staff-invitations', { body: { email: elsewhere.email, role: 'viewer' }, headers: { authorization: `Bearer ${key}` } });
    expect([fresh.status, taken.status]).toEqual([201, 201]);
    expect(Object.keys(taken.body).sort()).toEqual(Object.keys(fresh.body).sort());
    const accepted = await send(service, 'POST', '/staff-invitations/accept', { body: { token: taken.body.token, password: 'another long passphrase here' } });
    expect(accepted.status).toBe(409);
    expect(accepted.body.detail).toContain('one email, one workspace');
    const { rows } = await service.pool.query('SELECT count(*)::int AS n FROM staff_users WHERE email = $1', [elsewhere.email]);
    expect(rows[0].n).toBe(1);
  });
});

describe('staff users', () => {
  it('lists the workspace\'s staff only, with cursors', async () => {
    const { key: otherKey } = await service.newWorkspace();
    const mine = await staffUser(service, key, 'viewer');
    const theirs = await staffUser(service, otherKey, 'viewer');
    const page = await send(service, 'GET', '/staff-users?limit=100', { headers: { authorization: `Bearer ${key}` } });
    expect(page.status).toBe(200);
    const emails = page.body.data.map((u: any) => u.email);
    expect(emails).toContain(mine.email);
    expect(emails).not.toContain(theirs.email);
    const first = await send(service, 'GET', '/staff-users?limit=1', { headers: { authorization: `Bearer ${key}` } });
    expect(first.body.data).toHaveLength(1);
    const next = await send(service, 'GET', `/staff-users?limit=1&cursor=${encodeURIComponent(first.body.next)}`, { headers: { authorization: `Bearer ${key}` } });
    expect(next.body.data[0].id).not.toBe(first.body.data[0].id);
    expect((await send(service, 'PATCH', `/staff-users/${theirs.id}`, { body: { name: 'x' }, headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
    expect((await send(service, 'DELETE', `/staff-users/${theirs.id}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
  });

  it('applies a role change to the user\'s live session at once', async () => {
    const member = await staffUser(service, key, 'member');
    expect((await member.browser.post('/campaigns', { name: 'before', type: 'DISCOUNT_COUPONS' })).status).toBe(201);
    const changed = await send(service, 'PATCH', `/staff-users/${member.id}`, { body: { role: 'viewer' }, headers: { authorization: `Bearer ${key}` } });
    expect(changed.status).toBe(200);
    expect(changed.body.role).toBe('viewer');
    expect((await member.browser.post('/campaigns', { name: 'after', type: 'DISCOUNT_COUPONS' })).status).toBe(403);
    expect((await member.browser.get('/sessions/current')).body.staffUser.role).toBe('viewer');
  });

  it('ends every session of a removed user at once', async () => {
    const doomed = await staffUser(service, key, 'member');
    expect((await doomed.browser.get('/campaigns')).status).toBe(200);
    expect((await send(service, 'DELETE', `/staff-users/${doomed.id}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(204);
    expect((await doomed.browser.get('/campaigns')).status).toBe(401);
    expect((await service.pool.query('SELECT count(*)::int AS n FROM staff_sessions WHERE staff_user_id = $1', [doomed.id])).rows[0].n).toBe(0);
  });

  it('keeps an admin from changing or removing an owner, and from making one', async () => {
    const owner = await staffUser(service, key, 'owner');
    const admin = await staffUser(service, key, 'admin');
    const member = await staffUser(service, key, 'member');
    expect((await admin.browser.patch(`/staff-users/${owner.id}`, { role: 'viewer' })).status).toBe(403);
    expect((await admin.browser.delete(`/staff-users/${owner.id}`)).status).toBe(403);
    expect((await admin.browser.patch(`/staff-users/${member.id}`, { role: 'owner' })).status).toBe(403);
    expect((await admin.browser.patch(`/staff-users/${member.id}`, { role: 'admin' })).status).toBe(200);
    expect((await owner.browser.patch(`/staff-users/${member.id}`, { name: 'Promoted' })).body.name).toBe('Promoted');
  });

  it('keeps the last owner: exactly one of two owners demoting each other at once succeeds', async () => {
    const { key: soloKey } = await service.newWorkspace();
    const a = await staffUser(service, soloKey, 'owner');
    const b = await staffUser(service, soloKey, 'owner');
    const answers = await Promise.all([a.browser.patch(`/staff-users/${b.id}`, { role: 'admin' }), b.browser.patch(`/staff-users/${a.id}`, { role: 'admin' })]);
    const statuses = answers.map((x) => x.status).sort();
    // The loser is either refused as the last owner (409) or, demoted first, no longer holds the scopes (403).
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
    const { rows } = await service.pool.query(`SELECT count(*)::int AS n FROM staff_users s JOIN staff_users x ON x.workspace_id = s.workspace_id WHERE s.id = $1 AND x.role = 'owner'`, [a.id]);
    expect(rows[0].n).toBe(1);
    const lastOwner = answers[0]!.status === 200 ? a : b;
    expect((await send(service, 'DELETE', `/staff-users/${lastOwner.id}`, { headers: { authorization: `Bearer ${soloKey}` } })).status).toBe(409);
    expect((await send(service, 'PATCH', `/staff-users/${lastOwner.id}`, { body: { role: 'member' }, headers: { authorization: `Bearer ${soloKey}` } })).status).toBe(409);
  });
});
