// The event envelope recorded in the outbox and delivered to webhook subscribers.
import { z } from 'zod';
import { Timestamp, Uuid } from '../../contract/common.schemas.js';

export const EVENT_TYPES = ['customer.created', 'voucher.redeemed', 'voucher.redeemed.rolled_back', 'voucher.stack.redeemed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const Event = z
  .object({ id: Uuid, type: z.string(), payload: z.record(z.string(), z.unknown()), createdAt: Timestamp })
  .meta({ id: 'Event', description: 'Envelope of a recorded event: the body of each webhook delivery.' });
export type Event = z.infer<typeof Event>;
