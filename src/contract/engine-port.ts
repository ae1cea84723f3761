// The redemption engine as handlers see it (implemented by engine/redemption-engine.ts): typed outcomes in, typed
// outcomes out; transport failures (idempotency conflict, unknown redemption) are thrown as ProblemError.
import type { z } from 'zod';
import type {
  BalanceOutcome,
  Order,
  RedemptionOutcome,
  RollbackOutcome,
  StackOutcome,
  ValidationOutcome,
} from '../domains/redemptions/redemption.schemas.js';
import type { VoucherSnapshot } from '../domains/redemptions/voucher-snapshot.schemas.js';

/** The customer of a request, resolved before the engine sees it (created when new). */
export interface CustomerUse {
  id: string | null;
  given: boolean;
  /** What validation rules read of the customer: its segments and metadata (absent for a new customer). */
  facts?: { segments: string[]; metadata: Record<string, unknown>; sourceId?: string | null; email?: string | null; name?: string | null } | undefined;
}

export interface IdempotencyClaim {
  key: string;
  /** sha-256 of the operation, its path and its canonical body. */
  hash: string;
}

interface VoucherRequest {
  workspaceId: string;
  code: string;
  /** TIER: `code` names a promotion tier (`tier:<id>`); a voucher code of that name is not found, and vice versa. */
  kind?: 'CODE' | 'TIER' | undefined;
  order?: Order | undefined;
  amount?: number | undefined;
  customer: CustomerUse;
}

export interface RedemptionEngine {
  validate(request: VoucherRequest): Promise<ValidationOutcome>;
  /**
   * Several codes for one cart and customer at once (qualification): one message per partition, each answer as
   * `validate` would give it, in the order of `codes`.
   */
  validateMany(request: { workspaceId: string; codes: string[]; kind?: 'CODE' | 'TIER' | undefined; order: Order; customer: CustomerUse }): Promise<ValidationOutcome[]>;
  redeem(request: VoucherRequest & { idempotency?: IdempotencyClaim | undefined; metadata?: Record<string, unknown> | undefined }): Promise<RedemptionOutcome>;
  /** `campaignId`: the redemption's campaign, whose budget every partition reads again after the rollback. */
  rollback(request: { workspaceId: string; code: string; redemptionId: string; campaignId?: string | undefined; reason?: string | undefined; idempotency?: IdempotencyClaim | undefined }): Promise<RollbackOutcome>;
  redeemStack(request: {
    workspaceId: string;
    /** Each entry names a voucher `code` or a promotion `tierId`. */
    vouchers: Array<{ code?: string | undefined; amount?: number | undefined; tierId?: string | undefined }>;
    order: Order;
    customer: CustomerUse;
    idempotency: IdempotencyClaim;
    metadata?: Record<string, unknown> | undefined;
    stackLimit: number;
  }): Promise<StackOutcome>;
  adjustBalance(request: { workspaceId: string; code: string; amount: number; entryType: 'CREDITS_ADDED' | 'ADJUSTMENT' }): Promise<z.input<typeof BalanceOutcome>>;
  /** A voucher's settings changed, or it was created or deleted, through the CRUD API: the next decision reloads it. */
  voucherChanged(workspaceId: string, code?: string): Promise<void>;
  campaignChanged(workspaceId: string, campaignId: string): Promise<void>;
  /** A validation rule changed or was deleted, or a workspace setting the decisions read (its time zone). */
  rulesChanged(workspaceId: string): Promise<void>;
  /** Every active promotion tier of the workspace as the engine decides on it (the qualification index's source). */
  tierSnapshots(workspaceId: string): Promise<VoucherSnapshot[]>;
  check(): Promise<{ ok: boolean; detail: string; partitions?: unknown[] }>;
  stop(): Promise<void>;
}
