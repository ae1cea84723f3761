// SQL of api_keys: parameterized, explicit columns, one row mapper.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import type { ApiKey } from './api-key.schemas.js';

const COLUMNS = 'id, workspace_id, name, prefix, scopes, created_at, last_used_at';

interface ApiKeyRow {
  [column: string]: unknown;
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
}

export interface StoredApiKey {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  scopes: string[];
  secretHash: Buffer;
  lastUsedAt: Date | null;
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

export async function insertApiKey(
  db: Sql,
  key: { workspaceId: string; name: string; prefix: string; secretHash: Buffer; scopes: readonly string[] },
): Promise<ApiKey | undefined> {
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (workspace_id, name, prefix, secret_hash, scopes) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (prefix) DO NOTHING RETURNING ${COLUMNS}`,
    [key.workspaceId, key.name, key.prefix, key.secretHash, key.scopes],
  );
  return rows[0] && toApiKey(rows[0]);
}

export async function findActiveApiKeyByPrefix(db: Sql, prefix: string): Promise<StoredApiKey | undefined> {
  const { rows } = await db.query<{ id: string; workspace_id: string; name: string; prefix: string; scopes: string[]; secret_hash: Buffer; last_used_at: Date | null }>(
    'SELECT id, workspace_id, name, prefix, scopes, secret_hash, last_used_at FROM api_keys WHERE prefix = $1 AND revoked_at IS NULL',
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

/** For operators (CLI): revoke by id in whatever workspace the key lives. */
export async function revokeApiKeyById(db: Sql, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `WITH revoked AS (UPDATE api_keys SET revoked_at = now() WHERE id::text = $1 AND revoked_at IS NULL RETURNING id)
     SELECT pg_notify('api_keys_changed', id::text) FROM revoked`,
    [id],
  );
  return (rowCount ?? 0) > 0;
}
