// The events domain's public surface: the outbox insert used inside other domains' transactions, and the event log API.
export { outboxInsertOf, readOutboxBacklog, recordEvent, recordEvents, type NewEvent } from './event.queries.js';
export { eventContract } from './event.contract.js';
export { eventHandlers } from './event.handlers.js';
export { Event } from './event-log.schemas.js';
