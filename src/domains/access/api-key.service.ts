// API key use cases shared by the API, the CLI and startup: create (the key shown once), verify, bootstrap.
import type { Sql } from '../../platform/database.js';
import { ADMIN_SCOPES } from '../../contract/scopes.js';
import type { Actor } from '../../contract/actor.js';
import { generateApiKey, hashSecret, parseApiKey, secretMatches } from './api-key-secret.js';
import { findActiveApiKeyByPrefix, findApiKeyIdByPrefix, insertApiKey, touchApiKeyLastUsed } from './api-key.queries.js';
import type { ApiKey, CreatedApiKey } from './api-key.schemas.js';
import type { RateLimit, RateLimitSetting } from './rate-limit.schemas.js';

export async function createApiKey(
  db: Sql,
  request: { workspaceId: string; name: string; scopes: readonly string[]; rateLimit?: RateLimit | undefined },
): Promise<CreatedApiKey> {
  for (;;) {
    const generated = generateApiKey();
    const stored = await insertApiKey(db, { ...request, prefix: generated.prefix, secretHash: hashSecret(generated.secret) });
    // A prefix collision (1 in 62^12) just draws again.
    if (stored) return { ...stored, key: generated.key };
  }
}

export interface VerifiedApiKey {
  actor: Actor;
  /** The key's own limit, else its workspace's default; null: the server default applies. */
  rateLimit: RateLimitSetting | null;
}

/** The caller of a bearer token, or undefined for a malformed, unknown, revoked or wrong key. */
export async function verifyApiKey(db: Sql, token: string, onTouchError: (e: unknown) => void): Promise<VerifiedApiKey | undefined> {
  const parts = parseApiKey(token);
  if (!parts) return undefined;
  const stored = await findActiveApiKeyByPrefix(db, parts.prefix);
  if (!stored || !secretMatches(parts.secret, stored.secretHash)) return undefined;
  // last_used_at is refreshed at most every 30 s per key, off the request's critical path.
  if (!stored.lastUsedAt || Date.now() - stored.lastUsedAt.getTime() > 30_000) {
    touchApiKeyLastUsed(db, stored.id).catch(onTouchError);
  }
  return {
    actor: { type: 'api_key', id: stored.id, label: `${stored.name} (${stored.prefix})`, scopes: stored.scopes, workspaceId: stored.workspaceId },
    rateLimit: stored.rateLimit,
  };
}

function bootstrapKeyParts(key: string) {
  const parts = parseApiKey(key);
  if (!parts) throw new Error('BOOTSTRAP_API_KEY is not a service_<12>_<40> key');
  return parts;
}

/** The id of the key (active or revoked) that holds this key's prefix: a seed that is present already. */
export function findBootstrapApiKey(db: Sql, key: string): Promise<string | undefined> {
  return findApiKeyIdByPrefix(db, bootstrapKeyParts(key).prefix);
}

/** BOOTSTRAP_API_KEY in the caller's transaction, with every scope (incl. workspaces:admin); undefined when its prefix exists. */
export async function insertBootstrapApiKey(tx: Sql, workspaceId: string, key: string): Promise<ApiKey | undefined> {
  const parts = bootstrapKeyParts(key);
  return insertApiKey(tx, { workspaceId, name: 'bootstrap', prefix: parts.prefix, secretHash: hashSecret(parts.secret), scopes: ADMIN_SCOPES });
}
