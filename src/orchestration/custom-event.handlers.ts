// Records a custom event in one unit of work (the pipeline claims its idempotency key in it): the event row, what
// loyalty's CUSTOM_EVENT rules earn, and the conversion of a referral code it names.
import { implement, type UnitOfWork } from '../contract/handler.js';
import { requireCustomer } from '../domains/customers/index.js';
import { earnForCustomEvent, insertCustomEvent, type CustomEventBody, type CustomEventOutcome } from '../domains/loyalty/index.js';
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
  async recordCustomEvent({ input, actor, mutate }) {
    const { idempotencyKey: _key, ...body } = input;
    return mutate((unit) => recordCustomEvent(unit, actor.workspaceId, body));
  },
});
