// The engine's writes that answer for themselves in the audit log (rollbacks, balance adjustments, session releases):
// their entries and the adjustments' events, built from the figures the batch committed, in the batch's transaction.
import type { AuditTrail, RecordedChange } from '../../contract/handler.js';
import { insertAuditEntries, type NewAuditEntry } from '../../domains/audit/index.js';
import { recordEvents, type NewEvent } from '../../domains/events/index.js';
import type { Sql } from '../../platform/database.js';
import type { LedgerRow, RollbackRow } from './batch-writes.js';

export type AuditedWrite =
  | { kind: 'rollback'; trail: AuditTrail; rollback: RollbackRow }
  | { kind: 'adjustment'; trail: AuditTrail; code: string; entry: LedgerRow }
  | { kind: 'sessionRelease'; trail: AuditTrail; voucherId: string; code: string; session: { key: string; amount: number; expiresAt: number } };

/**
 * Inside the batch's transaction, after its statement (so the ledger rows' balanceAfter is settled): all entries in one
 * INSERT, the adjustments' events in another. Nothing recorded here is a secret field, so no redaction is needed.
 */
export async function recordAuditedWrites(tx: Sql, writes: readonly AuditedWrite[]): Promise<void> {
  await insertAuditEntries(tx, writes.map(auditEntryOf));
  await recordEvents(tx, writes.flatMap(adjustmentEventOf));
}

function auditEntryOf(write: AuditedWrite): NewAuditEntry {
  return { trail: write.trail, change: changeOf(write) };
}

function changeOf(write: AuditedWrite): RecordedChange {
  if (write.kind === 'rollback') {
    const { id, redemptionId, voucherCode, amount, reason } = write.rollback;
    return { resourceType: 'redemption', resourceId: redemptionId, after: { id, redemptionId, voucherCode, amount, ...(reason !== null ? { reason } : {}) } };
  }
  if (write.kind === 'sessionRelease') {
    const { key, amount, expiresAt } = write.session;
    const session = { key, expiresAt: new Date(expiresAt).toISOString(), ...(amount ? { reservedAmount: amount } : {}) };
    return { resourceType: 'voucher', resourceId: write.voucherId, before: { code: write.code, session } };
  }
  const { voucherId, amount, balanceAfter, type } = write.entry;
  return { resourceType: 'voucher', resourceId: voucherId, before: { balance: balanceAfter - amount }, after: { balance: balanceAfter, amount, entryType: type } };
}

function adjustmentEventOf(write: AuditedWrite): NewEvent[] {
  if (write.kind !== 'adjustment') return [];
  const { workspaceId, voucherId, amount, balanceAfter, type } = write.entry;
  return [{ workspaceId, type: 'voucher.balance.adjusted', payload: { voucherId, code: write.code, amount, balance: balanceAfter, entryType: type } }];
}
