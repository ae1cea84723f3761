// The condition evaluator field by field and op by op: scalars, lists, missing fields, applicableTo, failure paths,
// and local time in a zone with daylight saving time.
import { describe, expect, it } from 'vitest';
import { evaluateConditions, itemMatches, type CustomerFacts, type RuleFacts } from '../../src/checkout/condition.rules.js';
import { ZoneCalendar } from '../../src/contract/zone-calendar.js';
import { ConditionTree, type ConditionLeaf } from '../../src/contract/condition.schemas.js';

const SEG_A = '0b6f4c1e-8d2a-4f57-9c55-7f0f2a1d9e31';
const SEG_B = '1c7a5d2f-9e3b-4a68-8d66-8a1a3b2e0f42';

const customer: CustomerFacts = {
  id: 'c0ffee00-0000-4000-8000-000000000001',
  sourceId: 'crm-42',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  createdAt: '2026-03-01T10:00:00.000Z',
  segments: [SEG_A],
  metadata: { tier: 'gold', visits: 7, vip: true, tags: ['b2b', 'eu'], address: { city: 'Berlin' }, nothing: null },
  redemptions: 2,
};

const facts: RuleFacts = {
  order: {
    amount: 12_000,
    currency: 'EUR',
    items: [
      { productId: 'p-shoe', sku: 'shoe-42', quantity: 2, price: 4000 },
      { productId: 'p-sock', sku: 'sock-1', quantity: 4, price: 1000 },
      { sku: 'gift-wrap', quantity: 1, price: 0 },
    ],
    metadata: { channel: 'web', coupons: 1 },
  },
  customer,
  time: { dayOfWeek: 5, hour: 18 },
};

function holds(leaf: ConditionLeaf, on: RuleFacts = facts, applicableTo?: { productIds?: string[]; skus?: string[] }): boolean {
  // Every leaf used here is one the schema accepts.
  expect(ConditionTree.safeParse(leaf).success, JSON.stringify(leaf)).toBe(true);
  return evaluateConditions(leaf, on, applicableTo).ok;
}

describe('scalar fields', () => {
  it('compares order.amount with every numeric op', () => {
    expect(holds({ field: 'order.amount', op: 'eq', value: 12_000 })).toBe(true);
    expect(holds({ field: 'order.amount', op: 'eq', value: '12000' })).toBe(false);
    expect(holds({ field: 'order.amount', op: 'ne', value: 1 })).toBe(true);
    expect(holds({ field: 'order.amount', op: 'gt', value: 11_999 })).toBe(true);
    expect(holds({ field: 'order.amount', op: 'gt', value: 12_000 })).toBe(false);
    expect(holds({ field: 'order.amount', op: 'gte', value: 12_000 })).toBe(true);
    expect(holds({ field: 'order.amount', op: 'lt', value: 12_000 })).toBe(false);
    expect(holds({ field: 'order.amount', op: 'lte', value: 12_000 })).toBe(true);
    expect(holds({ field: 'order.amount', op: 'in', value: [1, 12_000] })).toBe(true);
    expect(holds({ field: 'order.amount', op: 'notIn', value: [1, 12_000] })).toBe(false);
    expect(holds({ field: 'order.amount', op: 'exists' })).toBe(true);
    expect(holds({ field: 'order.amount', op: 'exists', value: false })).toBe(false);
    expect(holds({ field: 'order.amount', op: 'contains', value: '12' })).toBe(false);
  });

  it('compares strings: equality is case-sensitive, contains is a substring test, gt never holds on text', () => {
    expect(holds({ field: 'order.currency', op: 'eq', value: 'EUR' })).toBe(true);
    expect(holds({ field: 'order.currency', op: 'eq', value: 'eur' })).toBe(false);
    expect(holds({ field: 'order.currency', op: 'in', value: ['USD', 'EUR'] })).toBe(true);
    expect(holds({ field: 'order.currency', op: 'notIn', value: ['USD', 'GBP'] })).toBe(true);
    expect(holds({ field: 'customer.email', op: 'contains', value: '@example.com' })).toBe(true);
    expect(holds({ field: 'customer.email', op: 'contains', value: '@EXAMPLE.com' })).toBe(false);
    expect(holds({ field: 'customer.name', op: 'contains', value: 'Love' })).toBe(true);
    expect(holds({ field: 'customer.sourceId', op: 'eq', value: 'crm-42' })).toBe(true);
    expect(holds({ field: 'customer.id', op: 'eq', value: customer.id! })).toBe(true);
    expect(holds({ field: 'order.currency', op: 'gt', value: 1 })).toBe(false);
  });

  it('compares customer.createdAt as an instant with ISO dates and timestamps', () => {
    expect(holds({ field: 'customer.createdAt', op: 'gte', value: '2026-03-01' })).toBe(true);
    expect(holds({ field: 'customer.createdAt', op: 'lt', value: '2026-03-01T10:00:00.001Z' })).toBe(true);
    expect(holds({ field: 'customer.createdAt', op: 'gt', value: '2026-03-01T11:00:00+02:00' })).toBe(true);
    expect(holds({ field: 'customer.createdAt', op: 'gt', value: '2026-03-02' })).toBe(false);
    expect(ConditionTree.safeParse({ field: 'customer.createdAt', op: 'gt', value: 5 }).success).toBe(false);
    expect(ConditionTree.safeParse({ field: 'customer.createdAt', op: 'gt', value: 'yesterday' }).success).toBe(false);
    expect(ConditionTree.safeParse({ field: 'order.amount', op: 'gt', value: '2026-03-02' }).success).toBe(false);
  });

  it('reads customer.redemptions and the local time as given', () => {
    expect(holds({ field: 'customer.redemptions', op: 'lt', value: 3 })).toBe(true);
    expect(holds({ field: 'customer.redemptions', op: 'lt', value: 2 })).toBe(false);
    expect(holds({ field: 'time.dayOfWeek', op: 'in', value: [5, 6] })).toBe(true);
    expect(holds({ field: 'time.hour', op: 'gte', value: 18 })).toBe(true);
    expect(holds({ field: 'time.hour', op: 'lt', value: 18 })).toBe(false);
  });
});

describe('metadata fields', () => {
  it('reads order and customer metadata by key, scalars as scalars and arrays as lists', () => {
    expect(holds({ field: 'order.metadata.channel', op: 'eq', value: 'web' })).toBe(true);
    expect(holds({ field: 'order.metadata.coupons', op: 'lte', value: 1 })).toBe(true);
    expect(holds({ field: 'customer.metadata.tier', op: 'in', value: ['gold', 'platinum'] })).toBe(true);
    expect(holds({ field: 'customer.metadata.vip', op: 'eq', value: true })).toBe(true);
    expect(holds({ field: 'customer.metadata.visits', op: 'gt', value: 5 })).toBe(true);
    expect(holds({ field: 'customer.metadata.tags', op: 'contains', value: 'eu' })).toBe(true);
    expect(holds({ field: 'customer.metadata.tags', op: 'notIn', value: ['us'] })).toBe(true);
  });

  it('treats an object value as present but equal to nothing, and null or an inherited key as missing', () => {
    expect(holds({ field: 'customer.metadata.address', op: 'exists' })).toBe(true);
    expect(holds({ field: 'customer.metadata.address', op: 'eq', value: 'Berlin' })).toBe(false);
    expect(holds({ field: 'customer.metadata.address', op: 'ne', value: 'Berlin' })).toBe(true);
    expect(holds({ field: 'customer.metadata.nothing', op: 'exists', value: false })).toBe(true);
    expect(holds({ field: 'customer.metadata.constructor', op: 'exists' })).toBe(false);
    expect(holds({ field: 'order.metadata.toString', op: 'exists', value: false })).toBe(true);
  });

  it('takes the whole rest of the name as the key, dots included', () => {
    const withDots: RuleFacts = { order: { amount: 1, currency: 'EUR', metadata: { 'utm.source': 'mail' } } };
    expect(holds({ field: 'order.metadata.utm.source', op: 'eq', value: 'mail' }, withDots)).toBe(true);
  });
});

describe('list fields', () => {
  it('customer.segments: contains/eq = includes, ne = excludes, in = any element listed, notIn = none listed, exists = non-empty', () => {
    expect(holds({ field: 'customer.segments', op: 'contains', value: SEG_A })).toBe(true);
    expect(holds({ field: 'customer.segments', op: 'eq', value: SEG_A })).toBe(true);
    expect(holds({ field: 'customer.segments', op: 'contains', value: SEG_B })).toBe(false);
    expect(holds({ field: 'customer.segments', op: 'ne', value: SEG_B })).toBe(true);
    expect(holds({ field: 'customer.segments', op: 'ne', value: SEG_A })).toBe(false);
    expect(holds({ field: 'customer.segments', op: 'in', value: [SEG_B, SEG_A] })).toBe(true);
    expect(holds({ field: 'customer.segments', op: 'notIn', value: [SEG_B] })).toBe(true);
    expect(holds({ field: 'customer.segments', op: 'notIn', value: [SEG_A] })).toBe(false);
    expect(holds({ field: 'customer.segments', op: 'exists' })).toBe(true);
    const noSegments: RuleFacts = { customer: { ...customer, segments: [] } };
    expect(holds({ field: 'customer.segments', op: 'exists' }, noSegments)).toBe(false);
    expect(holds({ field: 'customer.segments', op: 'exists', value: false }, noSegments)).toBe(true);
    expect(holds({ field: 'customer.segments', op: 'notIn', value: [SEG_A] }, noSegments)).toBe(true);
  });

  it('order.items.productId and sku list the lines that carry one', () => {
    expect(holds({ field: 'order.items.productId', op: 'contains', value: 'p-shoe' })).toBe(true);
    expect(holds({ field: 'order.items.productId', op: 'in', value: ['p-hat', 'p-sock'] })).toBe(true);
    expect(holds({ field: 'order.items.productId', op: 'notIn', value: ['p-hat'] })).toBe(true);
    expect(holds({ field: 'order.items.sku', op: 'eq', value: 'gift-wrap' })).toBe(true);
    expect(holds({ field: 'order.items.sku', op: 'ne', value: 'gift-wrap' })).toBe(false);
    expect(holds({ field: 'order.items.count', op: 'eq', value: 3 })).toBe(true);
    expect(holds({ field: 'order.items.quantity', op: 'eq', value: 7 })).toBe(true);
  });

  it('counts an order without items as none, and a missing order as missing', () => {
    const bare: RuleFacts = { order: { amount: 100, currency: 'EUR' } };
    expect(holds({ field: 'order.items.count', op: 'eq', value: 0 }, bare)).toBe(true);
    expect(holds({ field: 'order.items.quantity', op: 'lt', value: 1 }, bare)).toBe(true);
    expect(holds({ field: 'order.items.sku', op: 'exists' }, bare)).toBe(false);
    expect(holds({ field: 'order.items.count', op: 'exists' }, {})).toBe(false);
    expect(holds({ field: 'order.items.count', op: 'eq', value: 0 }, {})).toBe(false);
  });
});

describe('applicableTo', () => {
  it('restricts every order.items.* field to the matching items', () => {
    const shoes = { skus: ['shoe-42'] };
    expect(holds({ field: 'order.items.count', op: 'eq', value: 1 }, facts, shoes)).toBe(true);
    expect(holds({ field: 'order.items.quantity', op: 'eq', value: 2 }, facts, shoes)).toBe(true);
    expect(holds({ field: 'order.items.productId', op: 'contains', value: 'p-sock' }, facts, shoes)).toBe(false);
    expect(holds({ field: 'order.items.sku', op: 'eq', value: 'shoe-42' }, facts, shoes)).toBe(true);
    const either = { productIds: ['p-sock'], skus: ['gift-wrap'] };
    expect(holds({ field: 'order.items.quantity', op: 'eq', value: 5 }, facts, either)).toBe(true);
    expect(holds({ field: 'order.items.count', op: 'eq', value: 0 }, facts, { productIds: ['p-none'] })).toBe(true);
    // order.amount and other fields are not restricted.
    expect(holds({ field: 'order.amount', op: 'eq', value: 12_000 }, facts, shoes)).toBe(true);
  });

  it('itemMatches: by productId or sku, and everything without a restriction', () => {
    expect(itemMatches({ productId: 'p', sku: 's' }, { productIds: ['p'] })).toBe(true);
    expect(itemMatches({ productId: 'p', sku: 's' }, { skus: ['s'] })).toBe(true);
    expect(itemMatches({ productId: 'p', sku: 's' }, { productIds: ['x'], skus: ['y'] })).toBe(false);
    expect(itemMatches({ sku: 's' }, { productIds: ['s'] })).toBe(false);
    expect(itemMatches({}, null)).toBe(true);
    expect(itemMatches({}, undefined)).toBe(true);
  });
});

describe('missing fields', () => {
  const leaves: ConditionLeaf[] = [
    { field: 'order.amount', op: 'eq', value: 1 },
    { field: 'order.currency', op: 'contains', value: 'E' },
    { field: 'order.metadata.channel', op: 'in', value: ['web'] },
    { field: 'customer.id', op: 'gt', value: 1 },
    { field: 'customer.email', op: 'lte', value: 1 },
    { field: 'customer.segments', op: 'contains', value: SEG_A },
    { field: 'customer.redemptions', op: 'gte', value: 0 },
    { field: 'time.hour', op: 'lt', value: 24 },
  ];

  it('makes every op false except ne and notIn (true) and exists false', () => {
    for (const on of [{}, { order: undefined, customer: undefined, time: undefined }] as RuleFacts[]) {
      for (const leaf of leaves) {
        expect(holds(leaf, on), JSON.stringify(leaf)).toBe(false);
        expect(holds({ field: leaf.field, op: 'ne', value: 1 }, on)).toBe(true);
        expect(holds({ field: leaf.field, op: 'notIn', value: [1] }, on)).toBe(true);
        expect(holds({ field: leaf.field, op: 'exists' }, on)).toBe(false);
        expect(holds({ field: leaf.field, op: 'exists', value: false }, on)).toBe(true);
      }
    }
  });

  it('treats null customer fields and an absent redemption count as missing', () => {
    const anonymous: RuleFacts = { customer: { id: null, email: null, segments: [], metadata: {} } };
    expect(holds({ field: 'customer.id', op: 'exists' }, anonymous)).toBe(false);
    expect(holds({ field: 'customer.email', op: 'ne', value: 'a@b.c' }, anonymous)).toBe(true);
    expect(holds({ field: 'customer.redemptions', op: 'lt', value: 1 }, anonymous)).toBe(false);
    expect(holds({ field: 'customer.name', op: 'exists', value: false }, anonymous)).toBe(true);
  });
});

describe('trees and failure paths', () => {
  const amountOver = (value: number): ConditionLeaf => ({ field: 'order.amount', op: 'gt', value });

  it('all: holds when every child holds, else names the first failing child', () => {
    expect(evaluateConditions({ all: [amountOver(1), amountOver(2)] }, facts)).toEqual({ ok: true });
    expect(evaluateConditions({ all: [amountOver(1), amountOver(99_999), amountOver(1_000_000)] }, facts)).toEqual({
      ok: false,
      path: '/all/1',
      leaf: amountOver(99_999),
    });
  });

  it('any: holds when one child holds, else names its first child’s failure', () => {
    expect(evaluateConditions({ any: [amountOver(99_999), amountOver(1)] }, facts)).toEqual({ ok: true });
    const tree: ConditionTree = { any: [{ all: [amountOver(1), amountOver(99_999)] }, amountOver(1_000_000)] };
    expect(evaluateConditions(tree, facts)).toEqual({ ok: false, path: '/any/0/all/1', leaf: amountOver(99_999) });
  });

  it('not: fails with the pointer of its operand, naming the operand\'s first leaf', () => {
    expect(evaluateConditions({ not: amountOver(99_999) }, facts)).toEqual({ ok: true });
    expect(evaluateConditions({ any: [{ not: amountOver(1) }] }, facts)).toEqual({ ok: false, path: '/any/0/not', leaf: amountOver(1) });
    const tree: ConditionTree = { all: [amountOver(1), { not: { any: [amountOver(2), amountOver(3)] } }] };
    expect(evaluateConditions(tree, facts)).toEqual({ ok: false, path: '/all/1/not', leaf: amountOver(2) });
    expect(evaluateConditions({ not: { not: amountOver(99_999) } }, facts)).toEqual({ ok: false, path: '/not', leaf: amountOver(99_999) });
  });

  it('names the root leaf with an empty path', () => {
    expect(evaluateConditions(amountOver(99_999), facts)).toEqual({ ok: false, path: '', leaf: amountOver(99_999) });
  });
});

describe('ZoneCalendar.timeFacts', () => {
  const calendar = new ZoneCalendar();

  it('gives the local day and hour in Europe/Berlin across the spring DST change', () => {
    expect(calendar.timeFacts(Date.parse('2026-03-29T00:30:00Z'), 'Europe/Berlin')).toEqual({ dayOfWeek: 0, hour: 1, minute: 30 });
    expect(calendar.timeFacts(Date.parse('2026-03-29T01:30:00Z'), 'Europe/Berlin')).toEqual({ dayOfWeek: 0, hour: 3, minute: 30 });
    // The autumn change: two UTC instants an hour apart are both 02:30 local.
    expect(calendar.timeFacts(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toEqual({ dayOfWeek: 0, hour: 2, minute: 30 });
    expect(calendar.timeFacts(Date.parse('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toEqual({ dayOfWeek: 0, hour: 2, minute: 30 });
  });

  it('gives the local day where it differs from the UTC day', () => {
    const saturdayLateUtc = Date.parse('2026-11-21T23:30:00Z');
    expect(new Date(saturdayLateUtc).getUTCDay()).toBe(6);
    expect(calendar.timeFacts(saturdayLateUtc, 'UTC')).toEqual({ dayOfWeek: 6, hour: 23, minute: 30 });
    expect(calendar.timeFacts(saturdayLateUtc, 'Europe/Berlin')).toEqual({ dayOfWeek: 0, hour: 0, minute: 30 });
    expect(calendar.timeFacts(Date.parse('2026-11-22T05:00:00Z'), 'America/Los_Angeles')).toEqual({ dayOfWeek: 6, hour: 21, minute: 0 });
    expect(calendar.timeFacts(Date.parse('2026-11-21T12:00:00Z'), 'Pacific/Kiritimati')).toEqual({ dayOfWeek: 0, hour: 2, minute: 0 });
  });

  it('answers midnight as hour 0, never 24', () => {
    expect(calendar.timeFacts(Date.parse('2026-11-22T23:00:00Z'), 'Europe/Berlin')).toEqual({ dayOfWeek: 1, hour: 0, minute: 0 });
  });

  it('refuses an unknown zone', () => {
    expect(() => calendar.timeFacts(0, 'Mars/Olympus_Mons')).toThrow(RangeError);
  });
});
