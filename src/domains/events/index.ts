// The events domain's public surface: the outbox insert used inside other domains' transactions.
export { recordEvent, recordEvents, type NewEvent } from './event.queries.js';
export { EVENT_TYPES, type EventType } from './event.schemas.js';
