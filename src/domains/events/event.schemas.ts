// The event types recorded in the outbox (the contract's Events table).
export const EVENT_TYPES = ['customer.created', 'voucher.redeemed', 'voucher.redeemed.rolled_back', 'voucher.stack.redeemed', 'promotion_tier.redeemed', 'order.created', 'order.paid', 'order.canceled', 'order.fulfilled', 'voucher.published', 'customer.segment.entered', 'customer.segment.left'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
