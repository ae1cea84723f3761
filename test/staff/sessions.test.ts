// Staff sessions over real HTTP on a real PostgreSQL: the cookie's attributes, sign-in and sign-out, a new session at
// every sign-in, idle and absolute expiry, a password change ending every session, the cross-site rules, and a
// Bearer key winning over the cookie.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { browser, PASSWORD, send, signIn, staffUser, useStaffSettings } from './staff-support.js';

let service: TestService;
let key: string;

beforeAll(async () => {
  service = await startTestService();
  key = (await service.newWorkspace()).key;
});
afterAll(async () => service?.close());
beforeEach(() => useStaffSettings(service));

describe('signing in', () => {
  it('answers 201 with the staff user and sets an HttpOnly, SameSite=Strict, Path=/ cookie that is not in the body', async () => {
    const { email } = await staffUser(service, key, 'member');
    const answer = await signIn(service, email);
    expect(answer.status).toBe(201);
    expect(answer.body.staffUser).toMatchObject({ email, role: 'member' });
    expect(Date.parse(answer.body.expiresAt)).toBeGreaterThan(Date.now());
    const set = answer.headers.get('set-cookie')!;
    expect(set).toMatch(/^promotions_session=[A-Za-z0-9_-]{43}; /);
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Strict');
    expect(set).toContain('Path=/');
    expect(set).not.toContain('Secure');
    const token = answer.cookie!.split('=')[1]!;
    expect(JSON.stringify(answer.body)).not.toContain(token);
    const current = await browser(service, answer.cookie!).get('/sessions/current');
    expect(current.status).toBe(200);
    expect(current.body.staffUser).toMatchObject({ email, role: 'member', id: answer.body.staffUser.id });
  });

  it('answers an unknown email and a wrong password with the same 401, taking about as long', async () => {
    const { email } = await staffUser(service, key, 'viewer');
    const timed = async (who: string, password: string) => {
      const started = performance.now();
      const answer = await signIn(service, who, password);
      return { answer, ms: performance.now() - started };
    };
    const wrong = [];
    const unknown = [];
    for (let i = 0; i < 4; i++) {
      wrong.push(await timed(email, 'not the password at all'));
      unknown.push(await timed(`nobody-${i}@example.com`, 'not the password at all'));
    }
    for (const { answer } of [...wrong, ...unknown]) {
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ code: 'unauthorized', detail: 'the email or the password is wrong' });
      expect(answer.headers.get('set-cookie')).toBeNull();
    }
    const median = (xs: { ms: number }[]) => xs.map((x) => x.ms).sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratio = median(unknown) / median(wrong);
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });

  it('issues a new session at every sign-in; signing out ends only that one, and its cookie is cleared', async () => {
    const { email } = await staffUser(service, key, 'member');
    const first = await signIn(service, email);
    const second = await signIn(service, email);
    expect(first.cookie).not.toBe(second.cookie);
    const out = await browser(service, first.cookie!).delete('/sessions/current');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^promotions_session=; .*Max-Age=0/);
    expect((await browser(service, first.cookie!).get('/sessions/current')).status).toBe(401);
    expect((await browser(service, first.cookie!).get('/campaigns')).status).toBe(401);
    expect((await browser(service, second.cookie!).get('/sessions/current')).status).toBe(200);
  });

  it('refuses a malformed body with 400 and a body that is not JSON with 415, never 500', async () => {
    expect((await send(service, 'POST', '/sessions', { body: { email: 'x' } })).status).toBe(400);
    expect((await send(service, 'POST', '/sessions', { body: { email: 'a@b.co', password: 5 } })).status).toBe(400);
    expect((await send(service, 'POST', '/sessions', { body: [] })).status).toBe(400);
    const text = await fetch(service.baseUrl + '/api/v1/sessions', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    expect(text.status).toBe(415);
    const broken = await fetch(service.baseUrl + '/api/v1/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":' });
    expect(broken.status).toBe(400);
  });

  it('answers 401 for /sessions/current without a cookie, with a made-up cookie, and for an API key', async () => {
    expect((await send(service, 'GET', '/sessions/current')).status).toBe(401);
    expect((await send(service, 'GET', '/sessions/current', { headers: { cookie: `promotions_session=${'A'.repeat(43)}` } })).status).toBe(401);
    const withKey = await send(service, 'GET', '/sessions/current', { headers: { authorization: `Bearer ${key}` } });
    expect(withKey.status).toBe(401);
    expect((await send(service, 'DELETE', '/sessions/current', { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
  });
});

describe('session expiry', () => {
  it('ends a session idle for longer than the idle time', async () => {
    const user = await staffUser(service, key, 'viewer');
    expect((await user.browser.get('/campaigns')).status).toBe(200);
    await service.pool.query(`UPDATE staff_sessions SET last_seen_at = now() - interval '2 hours 1 minute' WHERE staff_user_id = $1`, [user.id]);
    expect((await user.browser.get('/campaigns')).status).toBe(401);
  });

  it('keeps a session in use alive, and ends it at its absolute end however busy', async () => {
    useStaffSettings(service, { sessionIdleMs: 60 * 60_000 });
    const user = await staffUser(service, key, 'viewer');
    await service.pool.query(`UPDATE staff_sessions SET last_seen_at = now() - interval '59 minutes' WHERE staff_user_id = $1`, [user.id]);
    expect((await user.browser.get('/campaigns')).status).toBe(200);
    // The use was recorded: the session is no longer near its idle end.
    await new Promise((r) => setTimeout(r, 100));
    const { rows } = await service.pool.query(`SELECT now() - last_seen_at < interval '1 minute' AS fresh FROM staff_sessions WHERE staff_user_id = $1`, [user.id]);
    expect(rows[0].fresh).toBe(true);
    await service.pool.query(`UPDATE staff_sessions SET expires_at = now() - interval '1 second' WHERE staff_user_id = $1`, [user.id]);
    expect((await user.browser.get('/campaigns')).status).toBe(401);
  });

  it("removes a user's ended sessions at its next sign-in, keeping the live ones", async () => {
    const user = await staffUser(service, key, 'viewer');
    const live = await signIn(service, user.email);
    await service.pool.query(`UPDATE staff_sessions SET expires_at = now() - interval '1 second' WHERE staff_user_id = $1 AND created_at = (SELECT min(created_at) FROM staff_sessions WHERE staff_user_id = $1)`, [user.id]);
    expect((await service.pool.query('SELECT count(*)::int AS n FROM staff_sessions WHERE staff_user_id = $1', [user.id])).rows[0].n).toBe(2);
    await signIn(service, user.email);
    expect((await service.pool.query('SELECT count(*)::int AS n FROM staff_sessions WHERE staff_user_id = $1', [user.id])).rows[0].n).toBe(2);
    expect((await service.pool.query('SELECT count(*)::int AS n FROM staff_sessions WHERE staff_user_id = $1 AND expires_at <= now()', [user.id])).rows[0].n).toBe(0);
    expect((await browser(service, live.cookie!).get('/sessions/current')).status).toBe(200);
  });

  it('sets the absolute end from the maximum age setting', async () => {
    useStaffSettings(service, { sessionMaxAgeMs: 30 * 60_000, sessionIdleMs: 60 * 60_000 });
    const { email } = await staffUser(service, key, 'viewer');
    const answer = await signIn(service, email);
    const ends = Date.parse(answer.body.expiresAt) - Date.now();
    expect(ends).toBeGreaterThan(29 * 60_000);
    expect(ends).toBeLessThanOrEqual(30 * 60_000 + 1_000);
  });
});

describe('password changes', () => {
  it('ends every session of the user; the new password signs in and the old one does not', async () => {
    const user = await staffUser(service, key, 'member');
    const other = await signIn(service, user.email);
    const refused = await user.browser.put('/sessions/current/password', { currentPassword: 'wrong wrong wrong', newPassword: 'a brand new passphrase' });
    expect(refused.status).toBe(403);
    const tooShort = await user.browser.put('/sessions/current/password', { currentPassword: PASSWORD, newPassword: 'short' });
    expect(tooShort.status).toBe(400);
    const changed = await user.browser.put('/sessions/current/password', { currentPassword: PASSWORD, newPassword: 'a brand new passphrase' });
    expect(changed.status).toBe(204);
    expect((await user.browser.get('/sessions/current')).status).toBe(401);
    expect((await browser(service, other.cookie!).get('/sessions/current')).status).toBe(401);
    expect((await signIn(service, user.email)).status).toBe(401);
    expect((await signIn(service, user.email, 'a brand new passphrase')).status).toBe(201);
  });
});

describe('cross-site requests', () => {
  it('lets a cookie write only from the own origin (Origin, else Sec-Fetch-Site: same-origin)', async () => {
    const user = await staffUser(service, key, 'member');
    const body = { name: 'from the dashboard', type: 'DISCOUNT_COUPONS' };
    expect((await user.browser.raw('POST', '/campaigns', { origin: service.baseUrl }, body)).status).toBe(201);
    expect((await user.browser.raw('POST', '/campaigns', { origin: 'https://evil.example' }, body)).body.code).toBe('forbidden');
    expect((await user.browser.raw('POST', '/campaigns', { origin: 'null' }, body)).status).toBe(403);
    expect((await user.browser.raw('POST', '/campaigns', {}, body)).status).toBe(403);
    expect((await user.browser.raw('POST', '/campaigns', { 'sec-fetch-site': 'cross-site' }, body)).status).toBe(403);
    expect((await user.browser.raw('POST', '/campaigns', { 'sec-fetch-site': 'same-site' }, body)).status).toBe(403);
    expect((await user.browser.raw('POST', '/campaigns', { 'sec-fetch-site': 'same-origin' }, body)).status).toBe(201);
    expect((await user.browser.raw('DELETE', '/sessions/current', { origin: 'https://evil.example' })).status).toBe(403);
    expect((await user.browser.get('/sessions/current')).status).toBe(200);
    // Reads are not changes: a GET needs no Origin.
    expect((await user.browser.raw('GET', '/campaigns', {})).status).toBe(200);
  });

  it('never answers with CORS headers, so no other site can read with the cookie', async () => {
    const user = await staffUser(service, key, 'viewer');
    const read = await user.browser.raw('GET', '/campaigns', { origin: 'https://evil.example' });
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
    expect(read.headers.get('access-control-allow-credentials')).toBeNull();
    const preflight = await fetch(service.baseUrl + '/api/v1/campaigns', {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('refuses a browser signing in from another site', async () => {
    const { email } = await staffUser(service, key, 'viewer');
    expect((await signIn(service, email, PASSWORD, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await signIn(service, email, PASSWORD, { 'sec-fetch-site': 'same-origin' })).status).toBe(201);
  });

  it('with an https public URL, sets a Secure __Host- cookie and takes writes only from that origin', async () => {
    useStaffSettings(service, { publicUrl: 'https://promo.example.com' });
    const { email } = await staffUser(service, key, 'member');
    const answer = await signIn(service, email);
    expect(answer.headers.get('set-cookie')).toMatch(/^__Host-promotions_session=.*; Secure$/);
    const body = { name: 'secure', type: 'DISCOUNT_COUPONS' };
    const own = browser(service, answer.cookie!, 'https://promo.example.com');
    expect((await own.post('/campaigns', body)).status).toBe(201);
    expect((await browser(service, answer.cookie!, service.baseUrl).post('/campaigns', body)).status).toBe(403);
    // The plain cookie name means nothing once the service is configured for https.
    const plain = answer.cookie!.replace('__Host-', '');
    expect((await browser(service, plain, 'https://promo.example.com').get('/sessions/current')).status).toBe(401);
  });
});

describe('a Bearer key and a cookie together', () => {
  it('acts as the key, not as the staff user', async () => {
    const viewer = await staffUser(service, key, 'viewer');
    const made = await send(service, 'POST', '/campaigns', {
      body: { name: 'as the key', type: 'DISCOUNT_COUPONS' },
      headers: { cookie: viewer.browser.cookie, authorization: `Bearer ${key}` },
    });
    expect(made.status).toBe(201);
    const { rows } = await service.pool.query(`SELECT actor_type FROM audit_entries WHERE resource_id = $1`, [made.body.id]);
    expect(rows).toEqual([{ actor_type: 'api_key' }]);
    const badKey = await send(service, 'GET', '/campaigns', { headers: { cookie: viewer.browser.cookie, authorization: 'Bearer service_nope' } });
    expect(badKey.status).toBe(401);
  });
});
