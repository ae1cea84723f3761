// The best deal of a qualification: of the discounts it found (tiers, the customer's vouchers, codes named in the
// request; gift and loyalty cards pay, they do not discount), the stack the stacking rules allow with the largest total
// discount. Decided by the engine on the state a stack's redemption reads (engine/stack/stack-preview.ts).
import type { CustomerUse, RedemptionEngine } from '../../contract/engine-port.js';
import type { Order } from '../../contract/checkout.schemas.js';
import type { BestDeal } from '../../contract/stack-preview.schemas.js';
import type { StackLimits } from '../../contract/handler.js';
import type { QualifiedOffer } from './tier.schemas.js';

const discounts = (offer: QualifiedOffer) => offer.kind !== 'GIFT_CARD' && offer.discount.type !== 'LOYALTY_POINTS';

export async function bestDealOf(
  deps: { stackLimits: StackLimits; engine: RedemptionEngine },
  request: { workspaceId: string; offers: readonly QualifiedOffer[]; order: Order; customer: CustomerUse },
): Promise<BestDeal> {
  const vouchers = request.offers.filter(discounts).map((o) => (o.tierId !== undefined ? { tierId: o.tierId } : { code: o.code! }));
  const stackLimit = await deps.stackLimits.of(request.workspaceId);
  return deps.engine.bestStack({ workspaceId: request.workspaceId, vouchers, order: request.order, customer: request.customer, stackLimit });
}
