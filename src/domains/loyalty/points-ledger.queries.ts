// The points ledger from TypeScript: thin calls of the SQL functions of schema/0018 (which lock the card, move the
// buckets, append the entry and keep the caches, in the caller's transaction), and the ledger's reads. The engine's
// batch statement may call the same functions (loyalty_debit, loyalty_refund) for pay-with-points.
import type { CursorCodec } from '../../platform/cursor.js';
import { sqlState, type Sql } from '../../platform/database.js';
import { keysetPage } from '../../platform/pagination.js';
import type { LedgerEntry, LedgerEntryType, PageQuery } from './member.schemas.js';

/** SQLSTATE of loyalty_out_of_range(): a change would pass 2^53-1. */
export const POINTS_OUT_OF_RANGE = '22003';

export function isPointsOutOfRange(error: unknown): boolean {
  return sqlState(error) === POINTS_OUT_OF_RANGE && (error as Error).message.startsWith('loyalty:');
}

export interface Source {
  type: string;
  id?: string | undefined;
}

export interface Grant {
  points: number;
  type: 'POINTS_EARNED' | 'ADJUSTMENT' | 'TRANSFER_IN' | 'REWARD_REFUND';
  activatesAt?: Date | null | undefined;
  expiresAt?: Date | null | undefined;
  source: Source;
  orderId?: string | null | undefined;
  earningRuleId?: string | null | undefined;
  reason?: string | null | undefined;
}

export interface Granted {
  entryId: string;
  bucketId: string;
  balanceAfter: number;
  pending: boolean;
}

/** A new bucket (pending when activatesAt is ahead), its entry and the caches. Throws out of range past 2^53-1. */
export async function grantPoints(tx: Sql, workspaceId: string, memberId: string, grant: Grant): Promise<Granted> {
  const { rows } = await tx.query<{ entry_id: string; bucket_id: string; balance_after: number; pending: boolean }>(
    'SELECT * FROM loyalty_grant($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
    [
      workspaceId,
      memberId,
      grant.points,
      grant.type,
      grant.activatesAt ?? null,
      grant.expiresAt ?? null,
      grant.source.type,
      grant.source.id ?? null,
      grant.orderId ?? null,
      grant.earningRuleId ?? null,
      grant.reason ?? null,
    ],
  );
  const row = rows[0]!;
  return { entryId: row.entry_id, bucketId: row.bucket_id, balanceAfter: row.balance_after, pending: row.pending };
}

/** A guarded spend, drawn FIFO by expiry; undefined when the balance does not cover it (nothing written). */
export async function debitPoints(
  tx: Sql,
  workspaceId: string,
  memberId: string,
  debit: { points: number; type: 'REDEMPTION' | 'REWARD_REDEMPTION' | 'ADJUSTMENT' | 'TRANSFER_OUT'; source: Source; orderId?: string | null; reason?: string | null },
): Promise<{ entryId: string; balanceAfter: number } | undefined> {
  const { rows } = await tx.query<{ entry_id: string; balance_after: number }>('SELECT * FROM loyalty_debit($1, $2, $3, $4, $5, $6, $7, $8)', [
    workspaceId,
    memberId,
    debit.points,
    debit.type,
    debit.source.type,
    debit.source.id ?? null,
    debit.orderId ?? null,
    debit.reason ?? null,
  ]);
  return rows[0] && { entryId: rows[0].entry_id, balanceAfter: rows[0].balance_after };
}

/** Gives a debit back into the buckets it drew from (all of it, or `points`); undefined when nothing is left to give. */
export async function refundPoints(
  tx: Sql,
  workspaceId: string,
  debitEntryId: string,
  refund: { type: 'ROLLBACK' | 'REWARD_REFUND'; source: Source; points?: number | undefined },
): Promise<{ entryId: string; balanceAfter: number; points: number } | undefined> {
  const { rows } = await tx.query<{ entry_id: string; balance_after: number; points: number }>(
    'SELECT * FROM loyalty_refund($1, $2, $3, $4, $5, $6)',
    [workspaceId, debitEntryId, refund.type, refund.source.type, refund.source.id ?? null, refund.points ?? null],
  );
  return rows[0] && { entryId: rows[0].entry_id, balanceAfter: rows[0].balance_after, points: rows[0].points };
}

export interface Reversal {
  entryId: string;
  memberId: string;
  points: number;
  pendingPoints: number;
  balanceAfter: number;
}

/** Takes an earning back once (undefined when it was already). */
export async function reverseEarning(
  tx: Sql,
  workspaceId: string,
  earningId: string,
  mode: 'TO_ZERO' | 'ALLOW_NEGATIVE',
  source: Source,
): Promise<Reversal | undefined> {
  const { rows } = await tx.query<{ entry_id: string; member_id: string; points: number; pending_points: number; balance_after: number }>(
    'SELECT * FROM loyalty_reverse_earning($1, $2, $3, $4, $5)',
    [workspaceId, earningId, mode, source.type, source.id ?? null],
  );
  const r = rows[0];
  return r && { entryId: r.entry_id, memberId: r.member_id, points: r.points, pendingPoints: r.pending_points, balanceAfter: r.balance_after };
}

export interface BucketChange {
  entryId: string | null;
  memberId: string;
  points: number;
  balanceAfter: number;
}

/** PENDING → ACTIVE for a bucket whose time has come; undefined when another run did it (once per bucket). */
export async function activateBucket(tx: Sql, workspaceId: string, bucketId: string): Promise<BucketChange | undefined> {
  const { rows } = await tx.query<{ entry_id: string; member_id: string; points: number; balance_after: number }>(
    'SELECT * FROM loyalty_activate_bucket($1, $2)',
    [workspaceId, bucketId],
  );
  const r = rows[0];
  return r && { entryId: r.entry_id, memberId: r.member_id, points: r.points, balanceAfter: r.balance_after };
}

/** ACTIVE → EXPIRED for a bucket past its expiry; undefined when another run did it (once per bucket). */
export async function expireBucket(tx: Sql, workspaceId: string, bucketId: string): Promise<BucketChange | undefined> {
  const { rows } = await tx.query<{ entry_id: string | null; member_id: string; points: number; balance_after: number }>(
    'SELECT * FROM loyalty_expire_bucket($1, $2)',
    [workspaceId, bucketId],
  );
  const r = rows[0];
  return r && { entryId: r.entry_id, memberId: r.member_id, points: r.points, balanceAfter: r.balance_after };
}

export interface LockedCard {
  id: string;
  campaignId: string;
  active: boolean;
  balance: number;
  pending: number;
  lifetime: number;
}

/** Locks cards in id order (two cards of one transfer never deadlock with the transfer the other way). */
export async function lockCards(tx: Sql, workspaceId: string, memberIds: readonly string[]): Promise<LockedCard[]> {
  const { rows } = await tx.query<{ id: string; campaign_id: string; active: boolean; points_balance: number; points_pending: number; points_lifetime: number }>(
    `SELECT id, campaign_id, active, points_balance, points_pending, points_lifetime FROM vouchers
      WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND type = 'LOYALTY_CARD' AND campaign_id IS NOT NULL
      ORDER BY id FOR UPDATE`,
    [workspaceId, memberIds],
  );
  return rows.map((r) => ({ id: r.id, campaignId: r.campaign_id, active: r.active, balance: r.points_balance, pending: r.points_pending, lifetime: r.points_lifetime }));
}

/** An earning: its grant and its once-only key (rule, reaction) in one call. */
export async function earnPoints(
  tx: Sql,
  workspaceId: string,
  memberId: string,
  earning: { points: number; activatesAt: Date | null; expiresAt: Date | null; source: Source; orderId: string | null; ruleId: string; reactionKey: string },
): Promise<Granted> {
  const { rows } = await tx.query<{ entry_id: string; bucket_id: string; balance_after: number; pending: boolean }>(
    'SELECT * FROM loyalty_earn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    [workspaceId, memberId, earning.points, earning.activatesAt, earning.expiresAt, earning.source.type, earning.source.id ?? null, earning.orderId, earning.ruleId, earning.reactionKey],
  );
  const row = rows[0]!;
  return { entryId: row.entry_id, bucketId: row.bucket_id, balanceAfter: row.balance_after, pending: row.pending };
}

/** The expiry instants of what a debit drew, with the points of each (a transfer's points keep their expiry). */
export async function findDrawnExpiries(tx: Sql, workspaceId: string, debitEntryId: string): Promise<Array<{ expiresAt: Date | null; points: number }>> {
  const { rows } = await tx.query<{ expires_at: Date | null; points: number }>(
    `SELECT b.expires_at, sum(d.points)::bigint AS points FROM loyalty_point_draws d JOIN loyalty_point_buckets b ON b.id = d.bucket_id
      WHERE d.workspace_id = $1 AND d.entry_id = $2 GROUP BY b.expires_at ORDER BY b.expires_at NULLS LAST`,
    [workspaceId, debitEntryId],
  );
  return rows.map((r) => ({ expiresAt: r.expires_at, points: r.points }));
}

const ENTRY_COLUMNS =
  'id, type, amount, pending_amount, balance_after, source_type, source_id, order_id, earning_rule_id, expires_at, activates_at, reason, created_at';

interface EntryRow {
  [column: string]: unknown;
  id: string;
  type: LedgerEntryType;
  amount: number;
  pending_amount: number;
  balance_after: number;
  source_type: string;
  source_id: string | null;
  order_id: string | null;
  earning_rule_id: string | null;
  expires_at: Date | null;
  activates_at: Date | null;
  reason: string | null;
  created_at: Date;
}

function toEntry(row: EntryRow): LedgerEntry {
  return {
    id: row.id,
    type: row.type,
    amount: row.amount,
    pendingAmount: row.pending_amount,
    balanceAfter: row.balance_after,
    source: { type: row.source_type, ...(row.source_id !== null ? { id: row.source_id } : {}) },
    ...(row.order_id !== null ? { orderId: row.order_id } : {}),
    ...(row.earning_rule_id !== null ? { earningRuleId: row.earning_rule_id } : {}),
    ...(row.expires_at !== null ? { expiresAt: row.expires_at.toISOString() } : {}),
    ...(row.activates_at !== null ? { activatesAt: row.activates_at.toISOString() } : {}),
    ...(row.reason !== null ? { reason: row.reason } : {}),
    createdAt: row.created_at.toISOString(),
  };
}

export async function findEntries(db: Sql, workspaceId: string, entryIds: readonly string[]): Promise<LedgerEntry[]> {
  const { rows } = await db.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM loyalty_ledger_entries WHERE workspace_id = $1 AND id = ANY($2::uuid[]) ORDER BY created_at, id`,
    [workspaceId, entryIds],
  );
  return rows.map(toEntry);
}

export function listEntries(db: Sql, cursors: CursorCodec, workspaceId: string, memberId: string, page: PageQuery) {
  return keysetPage<EntryRow, LedgerEntry>(
    db,
    cursors,
    {
      list: `loyalty.listTransactions:${memberId}`,
      from: 'loyalty_ledger_entries',
      columns: ENTRY_COLUMNS,
      where: ['workspace_id = $1', 'member_id = $2'],
      params: [workspaceId, memberId],
      map: toEntry,
    },
    page,
  );
}
