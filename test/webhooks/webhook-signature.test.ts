// The receiver-side verifier and the signer are inverses; the verifier refuses tampered bodies, other secrets, stale or
// future timestamps and malformed headers.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { computeWebhookSignature, signWebhookPayload, verifyWebhookSignature } from '../../src/platform/webhook-signature.js';

const body = '{"id":"0b6f4c1e-8d2a-4f57-9c55-7f0f2a1d9e31","type":"customer.created","payload":{"email":"ä@example.com"},"createdAt":"2026-11-21T10:00:00.000Z"}';
const secret = 'whsec_test_secret';
const t = 1_795_000_000;
const now = new Date(t * 1000);

describe('webhook signatures', () => {
  it('signs HMAC-SHA256 over "<t>.<raw body>" keyed with the UTF-8 secret, as any implementation computes it', () => {
    const expected = createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex');
    expect(computeWebhookSignature(secret, t, body)).toBe(expected);
    expect(signWebhookPayload(body, secret, t)).toBe(`t=${t},v1=${expected}`);
    expect(computeWebhookSignature(secret, t, Buffer.from(body))).toBe(expected);
  });

  it('verifies what it signs, from a string or the raw bytes, with any of several secrets', () => {
    const header = signWebhookPayload(body, [secret, 'whsec_previous'], t);
    expect(verifyWebhookSignature(body, header, secret, { now })).toEqual({ valid: true, timestamp: t });
    expect(verifyWebhookSignature(Buffer.from(body), header, 'whsec_previous', { now })).toEqual({ valid: true, timestamp: t });
    expect(verifyWebhookSignature(new Uint8Array(Buffer.from(body)), header, ['whsec_x', secret], { now }).valid).toBe(true);
  });

  it('refuses a changed body, another secret, and a re-serialized body', () => {
    const header = signWebhookPayload(body, secret, t);
    expect(verifyWebhookSignature(body.replace('ä', 'a'), header, secret, { now })).toEqual({ valid: false, reason: 'signature_mismatch' });
    expect(verifyWebhookSignature(body, header, 'whsec_other', { now })).toEqual({ valid: false, reason: 'signature_mismatch' });
    expect(verifyWebhookSignature(JSON.stringify(JSON.parse(body), null, 1), header, secret, { now }).valid).toBe(false);
  });

  it('refuses timestamps outside the tolerance (300 s by default), old or future', () => {
    const header = signWebhookPayload(body, secret, t);
    expect(verifyWebhookSignature(body, header, secret, { now: new Date((t + 300) * 1000) }).valid).toBe(true);
    expect(verifyWebhookSignature(body, header, secret, { now: new Date((t + 301) * 1000) })).toEqual({ valid: false, reason: 'timestamp_outside_tolerance' });
    expect(verifyWebhookSignature(body, header, secret, { now: new Date((t - 301) * 1000) }).valid).toBe(false);
    expect(verifyWebhookSignature(body, header, secret, { now: new Date((t + 3600) * 1000), toleranceSeconds: 3600 }).valid).toBe(true);
    expect(verifyWebhookSignature(body, signWebhookPayload(body, secret), secret).valid).toBe(true);
  });

  it('refuses malformed headers', () => {
    const v1 = computeWebhookSignature(secret, t, body);
    for (const header of [undefined, null, '', 'garbage', `v1=${v1}`, `t=${t}`, `t=abc,v1=${v1}`, `t=${t},v1=${v1.toUpperCase()}`, `t=${t},v1=${v1.slice(2)}`, `t=${t},t=${t},v1=${v1}`, `t=${t},v0=${v1}`]) {
      expect(verifyWebhookSignature(body, header, secret, { now }), String(header)).toEqual({ valid: false, reason: 'malformed_header' });
    }
    expect(verifyWebhookSignature(body, `t=${t},v0=deadbeef,v1=${v1}`, secret, { now }).valid).toBe(true);
  });
});
