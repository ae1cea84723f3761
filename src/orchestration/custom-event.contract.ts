// The custom events operation: one customer's event, earning by loyalty's CUSTOM_EVENT rules and converting a
// referral, so it sits above both domains.
import { defineOperation } from '../contract/operation.js';
import { CustomEventBody, CustomEventOutcome } from '../domains/loyalty/earning-rule.schemas.js';

export const customEventContract = {
  recordCustomEvent: defineOperation({
    name: 'loyalty.recordCustomEvent',
    method: 'post',
    path: '/custom-events',
    scope: 'loyalty:write',
    summary: 'Record a custom event of a customer; CUSTOM_EVENT earning rules named after it earn at once',
    description: 'The answer lists the points each rule earned (`effects`). A customer named by an unknown sourceId is created.',
    tags: ['Loyalty'],
    body: CustomEventBody,
    output: CustomEventOutcome,
    idempotent: true,
  }),
};
