// Webhook signatures, both sides: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the UTF-8
// bytes of the endpoint's secret. Standalone (node:crypto only) so receivers can use it without the service.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const EVENT_ID_HEADER = 'X-Service-Event-Id';
export const EVENT_TYPE_HEADER = 'X-Service-Event-Type';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type RawBody = string | Uint8Array;

function bodyBytes(rawBody: RawBody): Buffer {
  return typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
}

/** Lower-case hex HMAC-SHA256 of `<t>.<rawBody>`. */
export function computeWebhookSignature(secret: string, timestamp: number, rawBody: RawBody): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.`).update(bodyBytes(rawBody)).digest('hex');
}

/**
 * The header value for one attempt. With several secrets (during a rotation's overlap) it carries one `v1` per
 * secret, newest first, so a receiver holding either secret verifies.
 */
export function signWebhookPayload(
  rawBody: RawBody,
  secrets: string | readonly string[],
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (list.length === 0) throw new Error('signWebhookPayload needs at least one secret');
  return [`t=${timestamp}`, ...list.map((secret) => `v1=${computeWebhookSignature(secret, timestamp, rawBody)}`)].join(',');
}

export type WebhookVerification =
  | { valid: true; timestamp: number }
  | { valid: false; reason: 'malformed_header' | 'timestamp_outside_tolerance' | 'signature_mismatch' };

export interface VerifyOptions {
  /** Reject a `t` further than this from now (default 300 s). */
  toleranceSeconds?: number;
  /** The clock to compare `t` with (tests). */
  now?: Date;
}

function parseHeader(header: string): { timestamp: number; signatures: string[] } | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value) || timestamp !== undefined) return undefined;
      timestamp = Number(value);
    } else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) {
      signatures.push(value);
    }
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures };
}

/**
 * Checks a delivery the way a receiver should: over the raw bytes received (never a re-serialized body), comparing in
 * constant time, refusing a timestamp outside the tolerance. `secret` may list several (old and new during a rotation).
 */
export function verifyWebhookSignature(
  rawBody: RawBody,
  signatureHeader: string | null | undefined,
  secret: string | readonly string[],
  { toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now }: VerifyOptions = {},
): WebhookVerification {
  const parsed = typeof signatureHeader === 'string' ? parseHeader(signatureHeader) : undefined;
  if (!parsed) return { valid: false, reason: 'malformed_header' };
  const nowSeconds = Math.floor((now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - parsed.timestamp) > toleranceSeconds) return { valid: false, reason: 'timestamp_outside_tolerance' };
  const secrets = typeof secret === 'string' ? [secret] : secret;
  let matched = false;
  for (const s of secrets) {
    const expected = Buffer.from(computeWebhookSignature(s, parsed.timestamp, rawBody), 'hex');
    for (const candidate of parsed.signatures) {
      // Both are 32 bytes (the header parser only keeps 64 hex digits), as timingSafeEqual needs.
      if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
    }
  }
  return matched ? { valid: true, timestamp: parsed.timestamp } : { valid: false, reason: 'signature_mismatch' };
}
