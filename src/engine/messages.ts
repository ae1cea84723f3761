// The whole protocol between the web thread and a partition thread: requests, replies, nothing else crosses.
import type { ProblemCode } from '../contract/problems.js';
import type { Order } from '../domains/redemptions/redemption.schemas.js';
import type { UseContext, VoucherSnapshot } from '../domains/redemptions/redemption.rules.js';

export type { CustomerUse, IdempotencyClaim } from '../contract/engine-port.js';
import type { CustomerUse, IdempotencyClaim } from '../contract/engine-port.js';

/** CODE (default): a voucher code; TIER: a promotion tier, addressed by its internal code `tier:<id>`. */
export type VoucherKind = 'CODE' | 'TIER';

export interface HoldItem {
  code: string;
  voucherId: string;
  configVersion: number;
  campaignVersion: number | null;
  /** Gift credits taken (0 for a discount voucher). */
  balance: number;
}

export type PartitionCall =
  | { type: 'validate'; workspaceId: string; code: string; kind?: VoucherKind | undefined; order?: Order | undefined; amount?: number | undefined; customer: CustomerUse }
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
    }
  | { type: 'rollback'; workspaceId: string; code: string; redemptionId: string; reason?: string | undefined; idempotency?: IdempotencyClaim | undefined }
  | { type: 'adjust'; workspaceId: string; code: string; amount: number; entryType: 'CREDITS_ADDED' | 'ADJUSTMENT' }
  | { type: 'snapshot'; workspaceId: string; codes: string[]; customer: CustomerUse }
  | { type: 'hold'; workspaceId: string; holdId: string; items: HoldItem[]; customer: CustomerUse }
  | { type: 'release'; workspaceId: string; holdId: string; applied: boolean }
  | { type: 'forget'; workspaceId: string; code?: string | undefined; campaignId?: string | undefined; rules?: boolean | undefined; budgetOf?: string | undefined }
  | { type: 'ping' };

export interface SnapshotEntry {
  code: string;
  voucher: VoucherSnapshot | null;
  use: UseContext;
}

export interface PartitionRequest {
  id: number;
  call: PartitionCall;
}

export type PartitionReply =
  | { id: number; result: unknown }
  | { id: number; error: { problem?: ProblemCode; detail: string; sqlState?: string } };

export interface PartitionSettings {
  partition: number;
  databaseUrl: string;
  poolSize: number;
  cacheSize: number;
  cacheTtlMs: number;
  maxBatch: number;
  batchesInFlight: number;
  logLevel: string;
}
