// The `service_<prefix>_<secret>` key format: generation, parsing and the stored hash of the secret.
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_PATTERN = /^service_([A-Za-z0-9]{12})_([A-Za-z0-9]{40})$/;

function randomString(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

export interface ApiKeyParts {
  prefix: string;
  secret: string;
}

export function generateApiKey(): ApiKeyParts & { key: string } {
  const prefix = randomString(12);
  const secret = randomString(40);
  return { prefix, secret, key: `service_${prefix}_${secret}` };
}

export function parseApiKey(key: string): ApiKeyParts | undefined {
  const match = KEY_PATTERN.exec(key);
  return match ? { prefix: match[1]!, secret: match[2]! } : undefined;
}

/** A 238-bit random secret needs no slow hash: SHA-256 resists preimages, and lookups stay fast. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const candidate = hashSecret(secret);
  return candidate.length === storedHash.length && timingSafeEqual(candidate, storedHash);
}
