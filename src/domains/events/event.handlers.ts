// Event log handlers.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { eventContract } from './event.contract.js';
import { findEvent, listEvents } from './event-log.queries.js';

export const eventHandlers = implement(eventContract, {
  async listEvents({ input, actor, deps }) {
    return listEvents(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async getEvent({ input, actor, deps }) {
    const event = await findEvent(deps.db, actor.workspaceId, input.id);
    if (!event) throw problem('not_found', 'no such event');
    return event;
  },
});
