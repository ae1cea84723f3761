// Idempotency, its SQL (every statement on idempotency_keys): claim a key in a transaction, store the reply with the
// change, find stored replies, prune; the engine's batch claims with claimKeysSql. See contract/idempotency.ts.
import type { Sql } from './database.js';

/** A key with the reply to store under it (a batch's keys), or a stored one as read back. */
export interface StoredKey {
  workspaceId: string;
  key: string;
  requestHash: string;
  response: Record<string, unknown>;
}

/**
 * The batch form of the claim, for a statement's CTE; its arrays are the caller's parameters (workspace ids, keys,
 * fingerprints, replies as json). One row per key claimed: fewer rows than keys means some key was taken first.
 */
export function claimKeysSql(p: { workspaceIds: string; keys: string; requestHashes: string; responses: string }): string {
  return `INSERT INTO idempotency_keys (workspace_id, key, request_hash, response)
  SELECT * FROM unnest(${p.workspaceIds}, ${p.keys}, ${p.requestHashes}, ${p.responses})
  ON CONFLICT (workspace_id, key) DO NOTHING
  RETURNING 1`;
}

/**
 * Claims `key` in the transaction `tx`: undefined when this request is first (the reply is stored later, in the same
 * transaction), else what the key holds. A concurrent claim of the same key waits for the first one's transaction.
 */
export async function claimKey(tx: Sql, workspaceId: string, claim: { key: string; hash: string }): Promise<{ hash: string; response: Record<string, unknown> } | undefined> {
  const inserted = await tx.query(
    `INSERT INTO idempotency_keys (workspace_id, key, request_hash, response) VALUES ($1, $2, $3, '{}') ON CONFLICT DO NOTHING RETURNING 1`,
    [workspaceId, claim.key, claim.hash],
  );
  if ((inserted.rowCount ?? 0) > 0) return undefined;
  const { rows } = await tx.query<{ request_hash: string; response: Record<string, unknown> }>(
    'SELECT request_hash, response FROM idempotency_keys WHERE workspace_id = $1 AND key = $2',
    [workspaceId, claim.key],
  );
  // The insert saw the row; should it be gone since (pruned), the empty fingerprint answers as a conflict.
  return { hash: rows[0]?.request_hash ?? '', response: rows[0]?.response ?? {} };
}

/** Stores the reply under a key this transaction claimed. */
export async function storeReply(tx: Sql, workspaceId: string, key: string, response: unknown): Promise<void> {
  await tx.query('UPDATE idempotency_keys SET response = $3 WHERE workspace_id = $1 AND key = $2', [workspaceId, key, JSON.stringify(response)]);
}

/**
 * The stored replies of keys used before: read only when a commit found keys taken (or a stack replays), never
 * before every batch. Planned at each call: prepared, it read ~700 rows per keyed redemption after 20 s of load on a
 * fresh database, and the PostgreSQL work per redemption was 3x and more.
 */
export async function findStoredReplies(db: Sql, keys: ReadonlyArray<{ workspaceId: string; key: string }>): Promise<StoredKey[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ workspace_id: string; key: string; request_hash: string; response: Record<string, unknown> }>(
    `SELECT i.workspace_id, i.key, i.request_hash, i.response
       FROM unnest($1::uuid[], $2::text[]) AS k(workspace_id, key)
       JOIN idempotency_keys i ON i.workspace_id = k.workspace_id AND i.key = k.key`,
    [keys.map((k) => k.workspaceId), keys.map((k) => k.key)],
  );
  return rows.map((r) => ({ workspaceId: r.workspace_id, key: r.key, requestHash: r.request_hash, response: r.response }));
}

/** Deletes idempotency keys older than `olderThanMs`, at most `limit` per call; returns how many went. */
export async function pruneIdempotencyKeys(db: Sql, olderThanMs: number, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys WHERE ctid IN (
       SELECT ctid FROM idempotency_keys WHERE created_at < now() - $1::int8 * interval '1 millisecond' LIMIT $2)`,
    [olderThanMs, limit],
  );
  return rowCount ?? 0;
}
