// The event log's resources: an event as recorded (the webhook envelope) and the list filters.
import { z } from 'zod';
import { ListQuery, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { EventTypeName } from '../../contract/event.schemas.js';

export const Event = z
  .object({
    id: Uuid.meta({ description: 'Stable across webhook retries and replays; receivers deduplicate on it.' }),
    type: EventTypeName,
    payload: z.record(z.string(), z.unknown()),
    createdAt: Timestamp,
  })
  .meta({ id: 'Event', description: 'A recorded event; webhook deliveries POST exactly this envelope.' });
export type Event = z.infer<typeof Event>;

export const ListEventsQuery = ListQuery.extend({
  type: EventTypeName.optional().meta({ description: 'Only events of this type.' }),
});
export type ListEventsQuery = z.infer<typeof ListEventsQuery>;
