// What a stack would give, without redeeming it: the stack preview (POST /redemptions/stack/validate) and the best
// deal a qualification proposes (the allowed stack with the largest discount). Both answer on the state a stack's
// redemption made right after would read, through the same stack rules (checkout/stack.rules.ts).
import { z } from 'zod';
import { RefusalFields, StackBody, StackResult, OrderTotals } from './checkout.schemas.js';
import { Uuid } from './common.schemas.js';

/** A stack's body without its idempotency key: nothing is recorded, so nothing is replayed. */
export const StackPreviewBody = StackBody.omit({ idempotencyKey: true });

export const StackPreviewOk = z
  .object({ ok: z.literal(true), results: z.array(StackResult), order: OrderTotals.optional() })
  .meta({ id: 'StackPreviewOk', description: 'The stack would redeem every voucher: what each would give, and the order totals.' });
export const StackPreviewRefused = z
  .object({ ok: z.literal(false), ...RefusalFields, results: z.array(StackResult) })
  .meta({ id: 'StackPreviewRefused', description: 'The stack would be refused: `code` is the first failing voucher’s, `results` name it.' });
export const StackPreview = z
  .discriminatedUnion('ok', [StackPreviewOk, StackPreviewRefused])
  .meta({ id: 'StackPreview', description: 'The answer a stack would give on the current state, discriminated on `ok`; nothing committed or reserved.' });
export type StackPreview = z.infer<typeof StackPreview>;

export const BestDealVoucher = z.union([z.object({ code: z.string() }), z.object({ tierId: Uuid })]);
export type BestDealVoucher = z.infer<typeof BestDealVoucher>;

export const BestDeal = z
  .object({
    vouchers: z.array(BestDealVoucher).meta({ description: 'The stack to redeem, in this order (POST /redemptions/stack); empty when nothing discounts.' }),
    order: OrderTotals.meta({ description: 'The totals redeeming that stack gives.' }),
    exact: z.boolean().meta({ description: 'True when every allowed combination of the qualifying offers was weighed.' }),
  })
  .meta({ id: 'BestDeal', description: 'Of the qualifying discounts, the stack the stacking rules allow with the largest total discount.' });
export type BestDeal = z.infer<typeof BestDeal>;
