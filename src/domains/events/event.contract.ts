// Event log operations.
import { z } from 'zod';
import { listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { Event, ListEventsQuery } from './event-log.schemas.js';

const tags = ['Events'];

export const eventContract = {
  listEvents: defineOperation({
    name: 'events.list',
    method: 'get',
    path: '/events',
    scope: 'events:read',
    summary: 'List recorded events, newest first; filter by type',
    tags,
    query: ListEventsQuery,
    output: listEnvelope(Event, 'EventList'),
  }),
  getEvent: defineOperation({
    name: 'events.get',
    method: 'get',
    path: '/events/{id}',
    scope: 'events:read',
    summary: 'Get an event',
    tags,
    params: z.object({ id: Uuid }),
    output: Event,
  }),
};
