// The event types recorded in the outbox (the contract's Events table, and the changes a subscriber would want).
import { z } from 'zod';

export const EVENT_TYPES = [
  'customer.created',
  'voucher.redeemed',
  'voucher.redeemed.rolled_back',
  'voucher.stack.redeemed',
  'promotion_tier.redeemed',
  'order.created',
  'order.paid',
  'order.canceled',
  'order.fulfilled',
  'voucher.published',
  'customer.segment.entered',
  'customer.segment.left',
  'campaign.created',
  'campaign.updated',
  'campaign.deleted',
  'voucher.created',
  'voucher.updated',
  'voucher.disabled',
  'voucher.enabled',
  'voucher.deleted',
  'voucher.balance.adjusted',
  'validation_rule.created',
  'validation_rule.updated',
  'validation_rule.deleted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'api_key.created',
  'api_key.revoked',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The one event-type enum of the OpenAPI document: subscriptions, the event log and its filter all use it. */
export const EventTypeName = z.enum(EVENT_TYPES).meta({ id: 'EventType', description: 'An event type; see the Events section of the API guide.' });
