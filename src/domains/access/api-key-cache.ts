// Verified API keys kept in memory for a few seconds, so the hot path does not read api_keys on every request.
// Revocation stays immediate: a revoke in this process clears the cache before it answers, and a revoke anywhere
// (another process, the CLI) sends NOTIFY api_keys_changed, which every web process listens for (see listenForApiKeyChanges).
// The TTL bounds staleness should a notification be missed while the listener reconnects.
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AuthContext } from '../../contract/handler.js';
import type { Sql } from '../../platform/database.js';
import type { Logger } from '../../platform/logger.js';
import { listenForNotifications, type Listener } from '../../platform/notifications.js';
import { verifyApiKey } from './api-key.service.js';

export const API_KEY_CHANNEL = 'api_keys_changed';
const TTL_MS = 5_000;

// Keyed by a digest of the token, so the cache never holds a usable secret.
const verified = new LRUCache<string, AuthContext>({ max: 10_000, ttl: TTL_MS });
/** The cache serves only while a listener keeps it honest. */
let keyListener: Listener | undefined;

const digest = (token: string) => hash('sha256', token, 'base64');

export function forgetApiKeys(): void {
  verified.clear();
}

/** verifyApiKey with the cache in front (only while a listener keeps it honest; otherwise every call reads). */
export async function verifyApiKeyCached(db: Sql, token: string, onTouchError: (e: unknown) => void): Promise<AuthContext | undefined> {
  if (!keyListener?.listening) return verifyApiKey(db, token, onTouchError);
  const id = digest(token);
  const hit = verified.get(id);
  if (hit) return hit;
  const auth = await verifyApiKey(db, token, onTouchError);
  if (auth) verified.set(id, auth);
  return auth;
}

/** LISTENs for key changes on a dedicated connection; reconnects on loss. Returns a stop function. */
export function listenForApiKeyChanges(connectionString: string, log: Logger): () => Promise<void> {
  // Whatever was revoked while the connection was down is forgotten at every (re)connect.
  const listener = listenForNotifications(connectionString, log, { [API_KEY_CHANNEL]: () => forgetApiKeys() }, forgetApiKeys);
  keyListener = listener;
  return async () => {
    if (keyListener === listener) keyListener = undefined;
    await listener.stop();
  };
}
