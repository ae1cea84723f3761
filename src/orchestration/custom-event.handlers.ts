// Records a custom event in one unit of work with its idempotency key: the event row, what loyalty's CUSTOM_EVENT rules
// earn, and the conversion of a referral code it names.
import { implement, type UnitOfWork } from '../contract/handler.js';
import { requireCustomer } from '../domains/customers/index.js';
import { earnForCustomEvent, idempotentWrite, insertCustomEvent, type CustomEventBody, type CustomEventOutcome } from '../domains/loyalty/index.js';
import { idempotencyClaim } from '../domains/redemptions/index.js';
import { convertByEvent } from '../domains/referrals/index.js';
import { customEventContract } from './custom-event.contract.js';

async function recordCustomEvent(unit: UnitOfWork, workspaceId: string, body: CustomEventBody): Promise<CustomEventOutcome> {
  const customerId = await requireCustomer(unit.tx, workspaceId, body.customer);
  const id = await insertCustomEvent(unit.tx, workspaceId, { name: body.name, customerId, metadata: body.metadata ?? {}, referralCode: body.referral?.code ?? null });
  const effects: CustomEventOutcome['effects'] = await earnForCustomEvent(unit, workspaceId, { id, name: body.name, customerId });
  if (body.referral) effects.push(await convertByEvent(unit.tx, unit.emit, workspaceId, body.referral.code, customerId));
  unit.record({ resourceType: 'custom_event', resourceId: id, after: { name: body.name, customerId, effects } });
  return { id, effects };
}

export const customEventHandlers = implement(customEventContract, {
  async recordCustomEvent(ctx) {
    const claim = idempotencyClaim('loyalty.recordCustomEvent', '/custom-events', ctx.input);
    const { idempotencyKey: _key, ...body } = ctx.input;
    return idempotentWrite(ctx, claim, (unit) => recordCustomEvent(unit, ctx.actor.workspaceId, body)) as never;
  },
});
