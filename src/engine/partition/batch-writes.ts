// What one batch writes (BatchWrites and its rows), handed from the write plan to the commit statement; and the ledger's
// balance_after, filled from the voucher's balance after the batch.
import type { StoredKey } from '../../platform/idempotency-keys.sql.js';
import type { UsageKey } from './hot-path.sql.js';
import type { PointsDebit } from './points-moves.sql.js';

export interface VoucherDelta {
  id: string;
  uses: number;
  balance: number;
  /** Points the batch takes from a loyalty card's balance (its debits, drawn from the buckets in the same statement). */
  points: number;
  configVersion: number;
  campaignVersion: number | null;
}

export interface VoucherAfter {
  id: string;
  redeemedCount: number;
  giftBalance: number | null;
}

export interface UsageDelta extends UsageKey {
  workspaceId: string;
  delta: number;
}

export interface RedemptionRow {
  workspaceId: string;
  id: string;
  voucherId: string;
  voucherCode: string;
  campaignId: string | null;
  amount: number;
  kind: 'DISCOUNT' | 'GIFT' | 'POINTS';
  customerId: string | null;
  orderId: string | null;
  orderAmount: number | null;
  currency: string | null;
  stackId: string | null;
  itemDiscounts?: number[] | null | undefined;
  metadata: Record<string, unknown>;
  createdAt: Date;
  /** Pay with points: the points taken and the loyalty ledger entry the batch's debit writes under this id. */
  points: number | null;
  pointsEntryId: string | null;
}

export interface RollbackRow {
  workspaceId: string;
  id: string;
  redemptionId: string;
  voucherCode: string;
  amount: number;
  reason: string | null;
  /** The gift credits partial returns had given back when the rollback was decided: the commit checks it still is. */
  returnedCredit: number;
  createdAt: Date;
}

export interface LedgerRow {
  workspaceId: string;
  id: string;
  voucherId: string;
  type: 'CREDITS_ADDED' | 'REDEMPTION' | 'ROLLBACK' | 'ADJUSTMENT' | 'RETURN';
  amount: number;
  balanceAfter: number;
  redemptionId: string | null;
  createdAt: Date;
}

/**
 * Fills balanceAfter of a voucher's ledger rows (in order) from its balance after the whole transaction: the row is
 * locked by the update, so the last entry ends at that balance and each earlier one before the next one's change.
 */
export function settleBalances(entries: LedgerRow[], finalBalance: number): void {
  let after = finalBalance;
  for (let i = entries.length - 1; i >= 0; i--) {
    entries[i]!.balanceAfter = after;
    after -= entries[i]!.amount;
  }
}

/** Everything one batch writes, as the arrays of the commit statement. */
export interface BatchWrites {
  keys: readonly StoredKey[];
  rollbackIds: readonly string[];
  deltas: readonly VoucherDelta[];
  usage: readonly UsageDelta[];
  /** perCustomerLimit per voucher id whose uses grow. */
  usageLimits: ReadonlyArray<{ voucherId: string; limit: number }>;
  redemptions: readonly RedemptionRow[];
  rollbacks: readonly RollbackRow[];
  /** In the order of their changes per voucher; balance_after is computed from the voucher's balance after the batch. */
  ledger: readonly LedgerRow[];
  events: ReadonlyArray<{ workspaceId: string; type: string; payload: Record<string, unknown> }>;
  /** Net change per (campaign, period) of budgeted campaigns, with that period's limits (-1: none). */
  budgets: readonly BudgetDelta[];
  /** Validation sessions: the final state of each key a batch touched (a reservation, or none). */
  sessions: readonly SessionWrite[];
  /** Loyalty cards paying with points: a ledger entry each, drawn from the card's buckets (its balance: `deltas`). */
  pointsDebits?: readonly PointsDebit[];
  /** Insight rollup sums (none when the rollup is off), added to the rows of `writer` (a partition's number). */
  rollups?: readonly RollupDelta[];
  writer?: number;
  /** Partition leases (slot, fencing token) the batch was decided under: all must still be current. */
  fences?: ReadonlyArray<readonly [number, number]>;
}

export interface SessionWrite {
  workspaceId: string;
  voucherId: string;
  key: string;
  amount: number;
  /** null: the reservation ends (consumed by a redemption, or released). */
  expiresAt: Date | null;
}

/** A batch's sums for one rollup row (workspace, campaign, currency, hour); the writer is the committing partition. */
export interface RollupDelta {
  workspaceId: string;
  campaignId: string | null;
  currency: string;
  hour: Date;
  redemptions: number;
  discountAmount: number;
  giftAmount: number;
  rollbacks: number;
  rolledBackDiscount: number;
  rolledBackGift: number;
}

export interface BudgetDelta {
  workspaceId: string;
  campaignId: string;
  period: string;
  uses: number;
  amount: number;
  maxUses: number;
  maxAmount: number;
}
