// Sign-in throttling over real HTTP: failures per email and per client address within the window get 429 with
// Retry-After, a racing burst cannot pass the limit, a success clears the email's count, and behind a trusted
// proxy the address is the X-Forwarded-For entry it added.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SignInThrottle } from '../../src/domains/staff/sign-in-throttle.js';
import { startTestService, type TestService } from '../support/service.js';
import { signIn, staffUser, useStaffSettings } from './staff-support.js';

let service: TestService;
let key: string;

beforeAll(async () => {
  service = await startTestService();
  key = (await service.newWorkspace()).key;
});
afterAll(async () => service?.close());
beforeEach(() => useStaffSettings(service));

describe('per email', () => {
  it('answers 429 with Retry-After after 5 failures, even to the right password, and leaves other emails alone', async () => {
    const { email } = await staffUser(service, key, 'viewer');
    const other = await staffUser(service, key, 'viewer');
    for (let i = 0; i < 5; i++) expect((await signIn(service, email, 'wrong password here')).status).toBe(401);
    const limited = await signIn(service, email);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect((await signIn(service, email.toUpperCase())).status).toBe(429);
    expect((await signIn(service, other.email)).status).toBe(201);
  });

  it('counts an unknown email like a known one', async () => {
    for (let i = 0; i < 5; i++) expect((await signIn(service, 'ghost@example.com', 'wrong password here')).status).toBe(401);
    expect((await signIn(service, 'ghost@example.com', 'wrong password here')).status).toBe(429);
  });

  it('lets at most 5 of 30 racing wrong guesses reach the password check', async () => {
    const { email } = await staffUser(service, key, 'viewer');
    const answers = await Promise.all(Array.from({ length: 30 }, () => signIn(service, email, 'wrong password here')));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(25);
  });

  it('forgets the failures of an email once it signs in', async () => {
    const { email } = await staffUser(service, key, 'viewer');
    for (let i = 0; i < 4; i++) await signIn(service, email, 'wrong password here');
    expect((await signIn(service, email)).status).toBe(201);
    for (let i = 0; i < 4; i++) expect((await signIn(service, email, 'wrong password here')).status).toBe(401);
    expect((await signIn(service, email)).status).toBe(201);
  });
});

describe('per client address', () => {
  it('answers 429 once one address has failed too often, whatever the email', async () => {
    useStaffSettings(service, { throttle: { maxFailuresPerEmail: 5, maxFailuresPerAddress: 3, windowMs: 60_000 } });
    const { email } = await staffUser(service, key, 'viewer');
    for (let i = 0; i < 3; i++) expect((await signIn(service, `spray-${i}@example.com`, 'wrong password here')).status).toBe(401);
    const limited = await signIn(service, email);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });

  it('behind a trusted proxy, counts each forwarded client apart; untrusted, ignores the header', async () => {
    useStaffSettings(service, { trustProxy: true, throttle: { maxFailuresPerEmail: 50, maxFailuresPerAddress: 2, windowMs: 60_000 } });
    const from = (address: string) => ({ 'x-forwarded-for': `203.0.113.9, ${address}` });
    for (let i = 0; i < 2; i++) expect((await signIn(service, `a${i}@example.com`, 'wrong password here', from('198.51.100.1'))).status).toBe(401);
    expect((await signIn(service, 'a9@example.com', 'wrong password here', from('198.51.100.1'))).status).toBe(429);
    expect((await signIn(service, 'a9@example.com', 'wrong password here', from('198.51.100.2'))).status).toBe(401);

    useStaffSettings(service, { trustProxy: false, throttle: { maxFailuresPerEmail: 50, maxFailuresPerAddress: 2, windowMs: 60_000 } });
    for (let i = 0; i < 2; i++) await signIn(service, `b${i}@example.com`, 'wrong password here', from(`198.51.100.${10 + i}`));
    expect((await signIn(service, 'b9@example.com', 'wrong password here', from('198.51.100.99'))).status).toBe(429);
  });
});

describe('the throttle on its own', () => {
  it('frees a slot when the oldest failure leaves the window', () => {
    const throttle = new SignInThrottle({ maxFailuresPerEmail: 2, maxFailuresPerAddress: 100, windowMs: 1_000 });
    expect(throttle.begin('a', 'x', 0).allowed).toBe(true);
    expect(throttle.begin('a', 'x', 500).allowed).toBe(true);
    const refused = throttle.begin('a', 'x', 900);
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(throttle.begin('a', 'x', 1_001).allowed).toBe(true);
  });
});
