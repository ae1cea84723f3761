// Hot-path shapes: orders, outcomes (typed business decisions, never HTTP errors), explanation codes, redemptions.
import { z } from 'zod';
import { boundLineTotals, Currency, CustomerReference, listEnvelope, ListQuery, Metadata, Money, Timestamp, Uuid, VoucherCode } from './common.schemas.js';
import { ExplanationCode } from './outcomes.js';

// The codes live in contract/outcomes.ts (one closed list with their messages); re-exported for this domain's users.
export { EXPLANATION_CODES, ExplanationCode } from './outcomes.js';

export const Explanation = z
  .looseObject({ code: ExplanationCode, message: z.string().optional() })
  .meta({ id: 'Explanation', description: 'One reason behind an outcome, with details.' });
export type Explanation = z.infer<typeof Explanation>;

const ProductRef = z.string().min(1).max(200);

const ItemNames = z.array(ProductRef).max(50);

export const OrderItem = z.object({
  productId: ProductRef.optional(),
  sku: ProductRef.optional(),
  quantity: z.number().int().min(1).max(1_000_000),
  price: Money.meta({ description: 'Unit price in minor units.' }),
  // Described once, on Order: each checkout tool (MCP) inlines the order, so every word here is paid six times.
  categories: ItemNames.optional(),
  collections: ItemNames.optional(),
  metadata: z.record(z.string().max(100), z.unknown()).optional(),
});
export type OrderItem = z.infer<typeof OrderItem>;

export const Order = z
  .object({
    id: z.string().min(1).max(200).optional().meta({ description: "The caller's own order id." }),
    amount: Money.meta({ description: 'Order total before discounts, in minor units.' }),
    currency: Currency,
    items: z.array(OrderItem).max(500).superRefine(boundLineTotals).optional(),
    shipping: z
      .object({ amount: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) })
      .optional()
      .meta({ description: 'Part of amount; only FREE_SHIPPING takes it off.' }),
    metadata: Metadata.optional(),
  })
  .refine((o) => o.shipping === undefined || o.shipping.amount <= o.amount, { message: 'shipping.amount is part of amount: at most amount', path: ['shipping', 'amount'] })
  .meta({ id: 'Order', description: 'The cart a voucher is checked against. Items may carry categories, collections and metadata for discount targets.' });
export type Order = z.infer<typeof Order>;

export const ItemShare = z.object({
  index: z.number().int().meta({ description: 'Position of the item in order.items.' }),
  productId: z.string().optional(),
  sku: z.string().optional(),
  amount: Money.meta({ description: 'Line total (quantity × price).' }),
  discountAmount: Money.meta({ description: "This item's share of the discounts: where each landed (shipping's share is in shipping)." }),
});

export const OrderTotals = z
  .object({
    amount: Money,
    discountAmount: Money,
    giftAmount: Money.meta({ description: 'Gift credits applied (not a discount).' }),
    totalAmount: Money.meta({ description: 'amount - discountAmount - giftAmount, never below 0.' }),
    currency: Currency,
    items: z.array(ItemShare).optional(),
    shipping: z
      .object({ amount: Money, discountAmount: Money.meta({ description: 'What FREE_SHIPPING discounts took off shipping.' }) })
      .optional()
      .meta({ description: "With the order's shipping: what of discountAmount landed on it." }),
  })
  .meta({ id: 'OrderTotals' });
export type OrderTotals = z.infer<typeof OrderTotals>;

const IdempotencyKey = z.string().min(1).max(200).meta({ description: 'One key per logical request; kept at least 24 hours.' });
const GiftAmount = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).meta({ description: 'Gift credits wanted, in minor units.' });

/** The largest amount, balance or counter the service stores: JSON numbers are exact up to here. */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

export const SESSION_TTL_SECONDS = { default: 600, max: 604_800 } as const;

// Kept to characters that need no escaping in a URL path: a key is also addressed as /vouchers/{code}/sessions/{key}.
export const SessionKey = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._~:@-]+$/, 'letters, digits and . _ ~ : @ - only')
  .meta({ description: "A checkout's session key: letters, digits and `. _ ~ : @ -`, at most 200." });

export const SessionRequest = z
  .object({
    key: SessionKey.optional().meta({ description: 'Generated when absent. Validating again with the same key refreshes the reservation.' }),
    ttlSeconds: z.number().int().min(1).max(SESSION_TTL_SECONDS.max).default(SESSION_TTL_SECONDS.default).meta({ description: 'How long the reservation holds (default 600 s).' }),
  })
  .meta({
    id: 'ValidationSessionRequest',
    description: 'Reserve the use (and the gift credits validated) for this session until it redeems, is released or expires.',
  });

export const SessionReference = z
  .object({ key: SessionKey })
  .meta({ id: 'ValidationSessionReference', description: "Consumes this session's reservation; an unknown or expired key redeems as if none were given." });

export const ValidationSession = z
  .object({ key: SessionKey, expiresAt: Timestamp })
  .meta({ id: 'ValidationSession', description: 'The reservation a valid answer holds for the session.' });

const UseBody = z.object({
  order: Order.optional(),
  customer: CustomerReference.optional(),
  amount: GiftAmount.optional(),
});

export const ValidateBody = UseBody.extend({ session: SessionRequest.optional() });

/** What every redemption takes (a promotion tier's too); a voucher's redemption adds its session. */
export const RedeemBody = UseBody.extend({
  idempotencyKey: IdempotencyKey.optional(),
  metadata: Metadata.optional(),
});

export const RedeemVoucherBody = RedeemBody.extend({ session: SessionReference.optional() });

export const SessionParams = z.object({
  code: z.string().min(1).max(200).meta({ description: 'The voucher code, case-sensitive.' }),
  key: SessionKey,
});

export const VoucherSummary = z.object({
  code: z.string(),
  type: z.enum(['DISCOUNT', 'GIFT_CARD', 'LOYALTY_CARD']),
  campaignId: Uuid.optional(),
  balance: Money.optional().meta({ description: "A gift card's credits, or what a loyalty card's points are worth, that this caller may use." }),
  points: z.number().int().min(0).optional().meta({ description: "A loyalty card's points this caller may use." }),
});

/** What every refusal carries: its code (always), a message and the explanations behind it. */
export const RefusalFields = {
  code: ExplanationCode,
  message: z.string().optional(),
  explanations: z.array(Explanation).optional(),
};
const Replayed = z.boolean().optional().meta({ description: 'True when this is the stored outcome of an earlier request with the same idempotency key.' });

export const ValidationPassed = z
  .object({
    valid: z.literal(true),
    discount: z.object({ type: z.string(), amount: Money, points: z.number().int().min(0).optional().meta({ description: 'Points a loyalty card would pay them with.' }) }),
    order: OrderTotals.optional(),
    voucher: VoucherSummary,
    session: ValidationSession.optional(),
  })
  .meta({ id: 'ValidationPassed', description: 'The voucher can be used: what it would give.' });
export const ValidationRefused = z
  .object({ valid: z.literal(false), ...RefusalFields })
  .meta({ id: 'ValidationRefused', description: 'The voucher cannot be used: why (`code`, `explanations`).' });
export const ValidationOutcome = z
  .discriminatedUnion('valid', [ValidationPassed, ValidationRefused])
  .meta({ id: 'ValidationOutcome', description: 'A validation decision, discriminated on `valid`.' });
export type ValidationOutcome = z.infer<typeof ValidationOutcome>;

export const RedemptionStatus = z.enum(['SUCCEEDED', 'ROLLED_BACK']);

export const RedemptionSummary = z.object({
  id: Uuid,
  voucherCode: z.string().meta({ description: "The voucher's code; for a promotion tier its internal code `tier:<tierId>`." }),
  tierId: Uuid.optional().meta({ description: 'Set when a promotion tier was redeemed.' }),
  amount: Money.meta({ description: 'Discount applied, or gift credits taken, in minor units.' }),
  points: z.number().int().min(1).optional().meta({ description: 'Loyalty points taken to pay `amount` (a loyalty card paying with points).' }),
  customerId: Uuid.optional(),
  orderId: z.string().optional(),
  stackId: Uuid.optional(),
  status: RedemptionStatus,
  createdAt: Timestamp,
});

export const RedemptionSucceeded = z
  .object({ ok: z.literal(true), idempotent: Replayed, redemption: RedemptionSummary, order: OrderTotals.optional() })
  .meta({ id: 'RedemptionSucceeded', description: 'Redeemed: the redemption recorded and the order totals.' });
export const RedemptionRefused = z
  .object({ ok: z.literal(false), ...RefusalFields, idempotent: Replayed })
  .meta({ id: 'RedemptionRefused', description: 'Not redeemed, nothing recorded: why (`code`, `explanations`).' });
export const RedemptionOutcome = z
  .discriminatedUnion('ok', [RedemptionSucceeded, RedemptionRefused])
  .meta({ id: 'RedemptionOutcome', description: 'A redemption decision, discriminated on `ok`.' });
export type RedemptionOutcome = z.infer<typeof RedemptionOutcome>;

export const RollbackBody = z.object({
  reason: z.string().max(500).optional(),
  idempotencyKey: IdempotencyKey.optional(),
});

export const RollbackSucceeded = z
  .object({
    ok: z.literal(true),
    idempotent: Replayed,
    rollback: z.object({ id: Uuid, redemptionId: Uuid, voucherCode: z.string(), amount: Money, createdAt: Timestamp }),
  })
  .meta({ id: 'RollbackSucceeded', description: 'Rolled back: the use (and the gift credits) given back.' });
export const RollbackRefused = z
  .object({ ok: z.literal(false), ...RefusalFields, idempotent: Replayed })
  .meta({ id: 'RollbackRefused', description: 'Not rolled back (`redemption_already_rolled_back`).' });
export const RollbackOutcome = z
  .discriminatedUnion('ok', [RollbackSucceeded, RollbackRefused])
  .meta({ id: 'RollbackOutcome', description: 'A rollback decision, discriminated on `ok`.' });
export type RollbackOutcome = z.infer<typeof RollbackOutcome>;

export const StackEntry = z
  .object({
    code: VoucherCode.optional(),
    tierId: Uuid.optional().meta({ description: 'A promotion tier instead of a code.' }),
    amount: GiftAmount.optional(),
    session: SessionReference.optional().meta({ description: "Consumes this session's reservation of the voucher." }),
  })
  .refine((e) => (e.code === undefined) !== (e.tierId === undefined), { message: 'give either code or tierId', path: ['code'] })
  .refine((e) => e.session === undefined || e.tierId === undefined, { message: 'a promotion tier holds no sessions', path: ['session'] })
  .meta({ id: 'StackEntry', description: 'A voucher by its code, or an automatic promotion tier by its id.' });

export const StackBody = z.object({
  vouchers: z.array(StackEntry).min(1).max(30),
  order: Order,
  customer: CustomerReference.optional(),
  idempotencyKey: IdempotencyKey,
  metadata: Metadata.optional(),
});

export const StackResult = z.object({
  voucherCode: z.string().optional().meta({ description: 'The code of a code entry.' }),
  tierId: Uuid.optional().meta({ description: 'The tier of a tier entry.' }),
  ok: z.boolean(),
  code: ExplanationCode.optional(),
  amount: Money.optional(),
  redemptionId: Uuid.optional(),
  priority: z.number().int(),
});

export const StackSucceeded = z
  .object({ ok: z.literal(true), idempotent: Replayed, stackId: Uuid, results: z.array(StackResult), order: OrderTotals.optional() })
  .meta({ id: 'StackSucceeded', description: 'Every voucher redeemed, in one transaction.' });
export const StackRefused = z
  .object({ ok: z.literal(false), ...RefusalFields, idempotent: Replayed, results: z.array(StackResult) })
  .meta({ id: 'StackRefused', description: 'None redeemed, nothing recorded: `code` is the first failing voucher’s, `results` name it.' });
export const StackOutcome = z
  .discriminatedUnion('ok', [StackSucceeded, StackRefused])
  .meta({ id: 'StackOutcome', description: 'A stack decision, discriminated on `ok`.' });
export type StackOutcome = z.infer<typeof StackOutcome>;

export const Redemption = RedemptionSummary.extend({
  kind: z.enum(['DISCOUNT', 'GIFT', 'POINTS']),
  campaignId: Uuid.optional(),
  orderAmount: Money.optional(),
  currency: Currency.optional(),
  metadata: Metadata,
  rolledBackAt: Timestamp.optional(),
}).meta({ id: 'Redemption' });
export type Redemption = z.infer<typeof Redemption>;

export const RedemptionList = listEnvelope(Redemption, 'RedemptionList');

export const ListRedemptionsQuery = ListQuery.extend({
  voucherCode: z.string().min(1).max(100).optional(),
  customerId: Uuid.optional(),
  orderId: z.string().min(1).max(200).optional(),
  status: RedemptionStatus.optional(),
});

export const LedgerEntry = z
  .object({
    id: Uuid,
    type: z.enum(['CREDITS_ADDED', 'REDEMPTION', 'ROLLBACK', 'ADJUSTMENT']),
    amount: z.number().int().meta({ description: 'Signed change of the balance, in minor units.' }),
    balanceAfter: Money,
    redemptionId: Uuid.optional(),
    createdAt: Timestamp,
  })
  .meta({ id: 'GiftLedgerEntry' });
export const LedgerList = listEnvelope(LedgerEntry, 'GiftLedgerList');

export const BalanceBody = z.object({
  amount: z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).refine((n) => n !== 0, 'must not be 0'),
  type: z.enum(['CREDITS_ADDED', 'ADJUSTMENT']).default('CREDITS_ADDED').meta({ description: 'CREDITS_ADDED takes positive amounts only.' }),
});
export const BalanceOutcome = z.object({ code: z.string(), balance: Money, entry: LedgerEntry }).meta({ id: 'GiftBalanceChange' });
export type BalanceOutcome = z.infer<typeof BalanceOutcome>;
