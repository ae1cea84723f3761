// SQL of api_keys: parameterized, explicit columns, one row mapper.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import { presentFields } from '../../platform/partial-update.js';
import type { ApiKey, UpdateApiKeyBody } from './api-key.schemas.js';
import { rateLimitOfRow, rateLimitSetting, type RateLimit, type RateLimitSetting } from './rate-limit.schemas.js';

const COLUMNS = 'id, workspace_id, name, prefix, scopes, created_at, last_used_at, rate_limit_per_second, rate_limit_burst';

interface ApiKeyRow {
  [column: string]: unknown;
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
}

export interface StoredApiKey {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  scopes: string[];
  secretHash: Buffer;
  lastUsedAt: Date | null;
  /** The key's own limit, else its workspace's default; null: the server default applies. */
  rateLimit: RateLimitSetting | null;
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    rateLimit: rateLimitOfRow(row),
  };
}

export async function insertApiKey(
  db: Sql,
  key: { workspaceId: string; name: string; prefix: string; secretHash: Buffer; scopes: readonly string[]; rateLimit?: RateLimit | undefined },
): Promise<ApiKey | undefined> {
  const limit = key.rateLimit && rateLimitSetting(key.rateLimit);
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (workspace_id, name, prefix, secret_hash, scopes, rate_limit_per_second, rate_limit_burst)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (prefix) DO NOTHING RETURNING ${COLUMNS}`,
    [key.workspaceId, key.name, key.prefix, key.secretHash, key.scopes, limit?.requestsPerSecond ?? null, limit?.burst ?? null],
  );
  return rows[0] && toApiKey(rows[0]);
}

/** The workspace is joined for its default rate limit, so a verified key carries the limit it runs under. */
export async function findActiveApiKeyByPrefix(db: Sql, prefix: string): Promise<StoredApiKey | undefined> {
  const { rows } = await db.query<{
    id: string;
    workspace_id: string;
    name: string;
    prefix: string;
    scopes: string[];
    secret_hash: Buffer;
    last_used_at: Date | null;
    rate_limit_per_second: number | null;
    rate_limit_burst: number | null;
  }>(
    `SELECT k.id, k.workspace_id, k.name, k.prefix, k.scopes, k.secret_hash, k.last_used_at,
       COALESCE(k.rate_limit_per_second, w.rate_limit_per_second) AS rate_limit_per_second,
       CASE WHEN k.rate_limit_per_second IS NULL THEN w.rate_limit_burst ELSE k.rate_limit_burst END AS rate_limit_burst
     FROM api_keys k JOIN workspaces w ON w.workspace_id = k.workspace_id
     WHERE k.prefix = $1 AND k.revoked_at IS NULL`,
    [prefix],
  );
  const row = rows[0];
  return (
    row && {
      id: row.id,
      workspaceId: row.workspace_id,
      name: row.name,
      prefix: row.prefix,
      scopes: row.scopes,
      secretHash: row.secret_hash,
      lastUsedAt: row.last_used_at,
      rateLimit: rateLimitOfRow(row),
    }
  );
}

export async function touchApiKeyLastUsed(db: Sql, id: string): Promise<void> {
  await db.query(
    `UPDATE api_keys SET last_used_at = now()
     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '30 seconds')`,
    [id],
  );
}

/**
 * Applies the fields present in the patch ($3 names them) to an active key and tells every process (NOTIFY at
 * commit), so a new rate limit applies within a second; the key before and after, or undefined.
 */
export async function updateApiKey(
  db: Sql,
  workspaceId: string,
  id: string,
  patch: UpdateApiKeyBody,
): Promise<{ before: ApiKey; after: ApiKey } | undefined> {
  const limit = patch.rateLimit ? rateLimitSetting(patch.rateLimit) : undefined;
  const { rows } = await db.query<ApiKeyRow & { before_name: string; before_per_second: number | null; before_burst: number | null }>(
    `WITH old AS (
       SELECT id, name AS before_name, rate_limit_per_second AS before_per_second, rate_limit_burst AS before_burst
       FROM api_keys WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL FOR UPDATE
     ), updated AS (
       UPDATE api_keys k SET
         name = CASE WHEN 'name' = ANY($3) THEN $4::text ELSE k.name END,
         rate_limit_per_second = CASE WHEN 'rateLimit' = ANY($3) THEN $5::int ELSE k.rate_limit_per_second END,
         rate_limit_burst = CASE WHEN 'rateLimit' = ANY($3) THEN $6::int ELSE k.rate_limit_burst END
       FROM old WHERE k.id = old.id
       RETURNING ${COLUMNS.split(', ').map((c) => `k.${c}`).join(', ')}, old.before_name, old.before_per_second, old.before_burst
     )
     SELECT updated.*, pg_notify('api_keys_changed', updated.id::text) FROM updated`,
    [workspaceId, id, presentFields(patch), patch.name ?? null, limit?.requestsPerSecond ?? null, limit?.burst ?? null],
  );
  const row = rows[0];
  if (!row) return undefined;
  const after = toApiKey(row);
  const before = {
    ...after,
    name: row.before_name,
    rateLimit: rateLimitOfRow({ rate_limit_per_second: row.before_per_second, rate_limit_burst: row.before_burst }),
  };
  return { before, after };
}

/** Revokes an active key and tells every process (NOTIFY, delivered at commit); the key as it was, or undefined. */
export async function revokeApiKey(db: Sql, workspaceId: string, id: string): Promise<ApiKey | undefined> {
  const { rows } = await db.query<ApiKeyRow>(
    `WITH revoked AS (UPDATE api_keys SET revoked_at = now() WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS})
     SELECT revoked.*, pg_notify('api_keys_changed', id::text) FROM revoked`,
    [workspaceId, id],
  );
  return rows[0] && toApiKey(rows[0]);
}

export async function countActiveApiKeys(db: Sql): Promise<number> {
  const { rows } = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM api_keys WHERE revoked_at IS NULL');
  return rows[0]?.count ?? 0;
}

export function listApiKeys(db: Sql, cursors: CursorCodec, workspaceId: string, page: PageRequest) {
  return keysetPage<ApiKeyRow, ApiKey>(
    db,
    cursors,
    { list: 'apiKeys.list', from: 'api_keys', columns: COLUMNS, where: ['workspace_id = $1', 'revoked_at IS NULL'], params: [workspaceId], map: toApiKey },
    page,
  );
}

/** For operators (CLI): the workspace of an active key, whichever it is; the id is compared as text (any input). */
export async function findActiveApiKeyWorkspace(db: Sql, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ workspace_id: string }>('SELECT workspace_id FROM api_keys WHERE id::text = $1 AND revoked_at IS NULL', [id]);
  return rows[0]?.workspace_id;
}

/** The key holding a prefix, active or revoked (a prefix is never reused). */
export async function findApiKeyIdByPrefix(db: Sql, prefix: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM api_keys WHERE prefix = $1', [prefix]);
  return rows[0]?.id;
}
