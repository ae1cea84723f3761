// The whole protocol between the web thread and a partition thread: requests, replies, nothing else crosses.
import type { AuditTrail } from '../contract/handler.js';
import type { ProblemCode, ProblemFieldError } from '../contract/problems.js';
import type { Order } from '../contract/checkout.schemas.js';
import type { UseContext, VoucherSnapshot } from '../checkout/redemption.rules.js';
import type { TraceCarrier } from '../platform/tracing.js';
import type { BatchTiming } from './partition/partition-figures.js';

export type { CustomerUse, SessionOpening } from '../contract/engine-port.js';
export type { IdempotencyClaim } from '../contract/idempotency.js';
import type { CustomerUse, SessionOpening } from '../contract/engine-port.js';
import type { IdempotencyClaim } from '../contract/idempotency.js';

/** CODE (default): a voucher code; TIER: a promotion tier, addressed by its internal code `tier:<id>`. */
export type VoucherKind = 'CODE' | 'TIER';

export interface HoldItem {
  code: string;
  voucherId: string;
  configVersion: number;
  campaignVersion: number | null;
  /** Gift credits taken (0 for a discount voucher). */
  balance: number;
  /** The stack entry's session key: its reservation counts as this hold's own. */
  session?: string | undefined;
}

export interface StackItem {
  code: string;
  tierId?: string | undefined;
  amount?: number | undefined;
  session?: { key: string } | undefined;
}

export type PartitionCall =
  | {
      type: 'validate';
      workspaceId: string;
      code: string;
      kind?: VoucherKind | undefined;
      order?: Order | undefined;
      amount?: number | undefined;
      customer: CustomerUse;
      /** A valid answer reserves the use for this key: the request is then a write, decided and committed in a batch. */
      session?: SessionOpening | undefined;
    }
  | {
      type: 'redeem';
      workspaceId: string;
      code: string;
      kind?: VoucherKind | undefined;
      order?: Order | undefined;
      amount?: number | undefined;
      customer: CustomerUse;
      idempotency?: IdempotencyClaim | undefined;
      metadata?: Record<string, unknown> | undefined;
      session?: { key: string } | undefined;
    }
  // A write that answers for itself in the audit log carries its trail; the batch that commits it writes the entry.
  | { type: 'rollback'; workspaceId: string; code: string; redemptionId: string; reason?: string | undefined; conversionReason?: string | undefined; idempotency?: IdempotencyClaim | undefined; audit: AuditTrail }
  | { type: 'adjust'; workspaceId: string; code: string; amount: number; entryType: 'CREDITS_ADDED' | 'ADJUSTMENT'; audit: AuditTrail }
  | { type: 'releaseSession'; workspaceId: string; code: string; key: string; audit: AuditTrail }
  /** `sessions`: the session key of a code, whose own reservation the snapshot does not count as taken. */
  | { type: 'snapshot'; workspaceId: string; codes: string[]; customer: CustomerUse; sessions?: Record<string, string> | undefined }
  | { type: 'hold'; workspaceId: string; holdId: string; items: HoldItem[]; customer: CustomerUse }
  /**
   * A whole stack whose vouchers this thread owns (every slot held by this process and served here): decided and
   * committed in a batch like a redemption, with no holds. `code` of a tier entry is its internal code `tier:<id>`.
   */
  | {
      type: 'stack';
      workspaceId: string;
      vouchers: StackItem[];
      order: Order;
      customer: CustomerUse;
      idempotency: IdempotencyClaim;
      metadata?: Record<string, unknown> | undefined;
      stackLimit: number;
    }
  | { type: 'release'; workspaceId: string; holdId: string; applied: boolean }
  | { type: 'forget'; workspaceId: string; code?: string | undefined; campaignId?: string | undefined; rules?: boolean | undefined; budgetOf?: string | undefined }
  /** This process gained a partition lease: whatever it cached may have changed under another owner meanwhile. */
  | { type: 'forgetAll' }
  | { type: 'ping' }
  /** The figures /metrics samples: queue, holds, cache, batch sizes and commit times, the thread's pool. */
  | { type: 'figures' }
  /** Write the refusal counts kept in memory now (before a stop). */
  | { type: 'flush' };

/** A partition slot and the fencing token of this process's lease on it. */
export type Fence = readonly [slot: number, token: number];

/**
 * A call as a partition thread receives it: with the lease it was routed under, which its writes carry to the database
 * (`fences`: a stack's, one per slot of its vouchers), and the span of a traced request (answered with its batch's times).
 */
export type FencedCall = PartitionCall & { fence?: Fence | undefined; fences?: Fence[] | undefined; trace?: TraceCarrier | undefined };

/** The detail of the 503 a partition answers when its lease moved before it could commit: the router asks the new owner. */
export const PARTITION_MOVED = 'the partition of this voucher moved to another process; retry';

export interface SnapshotEntry {
  code: string;
  voucher: VoucherSnapshot | null;
  use: UseContext;
}

/**
 * A refusal that names fields (`errors`), sent as a result because a thread's error reply carries only a code and a
 * detail; the router throws it as the ProblemError it was.
 */
export interface Refused {
  refused: { problem: ProblemCode; detail: string; errors: ProblemFieldError[] };
}

export function isRefused(result: unknown): result is Refused {
  return typeof result === 'object' && result !== null && 'refused' in result;
}

export interface PartitionRequest {
  id: number;
  call: FencedCall;
}

export type PartitionReply =
  | { id: number; result: unknown; timing?: BatchTiming }
  | { id: number; error: { problem?: ProblemCode; detail: string; sqlState?: string } };

export interface PartitionSettings {
  partition: number;
  databaseUrl: string;
  poolSize: number;
  cacheSize: number;
  cacheTtlMs: number;
  maxBatch: number;
  batchesInFlight: number;
  /** Add each batch's figures to the insights rollup in its commit statement. */
  insightsRollup: boolean;
  logLevel: string;
}
