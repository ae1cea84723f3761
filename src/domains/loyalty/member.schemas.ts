// Loyalty members (a LOYALTY_CARD voucher per customer and program), their points ledger, and the points operations'
// bodies and outcomes.
import { z } from 'zod';
import { CustomerReference, ListQuery, Metadata, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { RefusalFields } from '../../contract/checkout.schemas.js';
import { VoucherCode } from '../../contract/common.schemas.js';

const SAFE = Number.MAX_SAFE_INTEGER;
export const Points = z.number().int().min(-SAFE).max(SAFE);
const IdempotencyKey = z.string().min(1).max(200).meta({ description: 'One key per logical request; kept at least 24 hours.' });

export const Member = z
  .object({
    id: Uuid,
    programId: Uuid,
    customerId: Uuid.nullable(),
    code: VoucherCode,
    active: z.boolean(),
    balance: Points.meta({ description: 'Active points: the sum of the ledger amounts.' }),
    pendingBalance: Points.meta({ description: 'Points waiting to activate: the sum of the ledger pendingAmounts.' }),
    lifetimeEarned: Points.meta({ description: 'Points earned (once active), net of reversed ones.' }),
    tier: z.object({ id: Uuid, name: z.string() }).optional().meta({ description: 'The highest tier whose minPoints lifetimeEarned reaches.' }),
    expiring: z
      .array(z.object({ date: Timestamp, points: Points }))
      .meta({ description: 'The next (at most 5) expiry instants with the points that leave the balance then.' }),
    metadata: Metadata,
    createdAt: Timestamp,
  })
  .meta({ id: 'LoyaltyMember', description: 'A customer in a loyalty program; its card is a LOYALTY_CARD voucher with this code.' });
export type Member = z.infer<typeof Member>;

export const CreateMemberBody = z.object({
  customer: CustomerReference.meta({ description: 'By id, email, or sourceId (created when new).' }),
  code: VoucherCode.optional().meta({ description: 'The card code; generated when left out. An existing code is a 409.' }),
  metadata: Metadata.optional(),
});
export type CreateMemberBody = z.infer<typeof CreateMemberBody>;

export const LEDGER_ENTRY_TYPES = [
  'POINTS_EARNED',
  'PENDING_ADDED',
  'PENDING_ACTIVATED',
  'PENDING_CANCELED',
  'EARNING_REVERSED',
  'POINTS_EXPIRED',
  'REWARD_REDEMPTION',
  'REWARD_REFUND',
  'REDEMPTION',
  'ROLLBACK',
  'ADJUSTMENT',
  'TRANSFER_OUT',
  'TRANSFER_IN',
] as const;
export type LedgerEntryType = (typeof LEDGER_ENTRY_TYPES)[number];

export const LedgerEntry = z
  .object({
    id: Uuid,
    type: z.enum(LEDGER_ENTRY_TYPES),
    amount: Points,
    pendingAmount: Points,
    balanceAfter: Points,
    source: z.object({ type: z.string(), id: z.string().optional() }),
    orderId: z.string().optional(),
    earningRuleId: Uuid.optional(),
    expiresAt: Timestamp.optional(),
    activatesAt: Timestamp.optional(),
    reason: z.string().optional(),
    createdAt: Timestamp,
  })
  .meta({ id: 'LoyaltyLedgerEntry', description: 'One change of a member’s points; balance = sum of amount, pendingBalance = sum of pendingAmount.' });
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const PointsBody = z.object({
  points: Points.refine((p) => p !== 0, 'points must not be 0').meta({ description: 'Positive adds, negative takes (never below 0).' }),
  reason: z.string().max(500).optional(),
  expiresAt: Timestamp.optional().meta({ description: 'Added points: when they expire; default: the program’s expiration.' }),
  activatesAt: Timestamp.optional().meta({ description: 'Added points: pending until this instant.' }),
  idempotencyKey: IdempotencyKey.optional(),
});
export type PointsBody = z.infer<typeof PointsBody>;

const Replayed = z.boolean().optional();
/** Points not moved, nothing recorded: why. Shared by adjustments and transfers. */
export const LoyaltyPointsRefused = z
  .object({ ok: z.literal(false), ...RefusalFields, idempotent: Replayed })
  .meta({ id: 'LoyaltyPointsRefused', description: 'No points moved: why (`code`, e.g. `loyalty_points_insufficient`).' });

export const PointsOutcome = z
  .discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), idempotent: Replayed, entry: LedgerEntry, member: Member }).meta({ id: 'LoyaltyPointsAdjusted' }),
    LoyaltyPointsRefused,
  ])
  .meta({ id: 'LoyaltyPointsOutcome', description: 'ok with the ADJUSTMENT entry and the member, or a refusal code; discriminated on `ok`.' });
export type PointsOutcome = z.infer<typeof PointsOutcome>;

export const TransferBody = z.object({
  toMemberId: Uuid.meta({ description: 'A member of the same program.' }),
  points: z.number().int().min(1).max(SAFE),
  reason: z.string().max(500).optional(),
  idempotencyKey: IdempotencyKey.optional(),
});
export type TransferBody = z.infer<typeof TransferBody>;

export const TransferOutcome = z
  .discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), idempotent: Replayed, entries: z.array(LedgerEntry), member: Member }).meta({ id: 'LoyaltyPointsTransferred' }),
    LoyaltyPointsRefused,
  ])
  .meta({
    id: 'LoyaltyTransferOutcome',
    description: 'ok with the TRANSFER_OUT and TRANSFER_IN entries (one per expiry instant the points keep) and the sender, or a refusal.',
  });
export type TransferOutcome = z.infer<typeof TransferOutcome>;

export const MemberListQuery = ListQuery;
export const TransactionListQuery = ListQuery;
export type PageQuery = z.infer<typeof ListQuery>;

export const CustomerMemberships = z.object({ data: z.array(Member) }).meta({ id: 'CustomerLoyaltyMemberships' });
