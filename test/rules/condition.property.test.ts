// Laws of the condition evaluator over arbitrary schema-valid trees and arbitrary facts: negation, one-child
// combinators, every/some, De Morgan, totality, and failure paths that resolve to a node of the tree.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateConditions, type RuleFacts } from '../../src/checkout/condition.rules.js';
import { CONDITION_FIELDS, CONDITION_OPS, ConditionTree, type ConditionLeaf } from '../../src/contract/condition.schemas.js';

const SEGMENTS = ['0b6f4c1e-8d2a-4f57-9c55-7f0f2a1d9e31', '1c7a5d2f-9e3b-4a68-8d66-8a1a3b2e0f42'];
const WORDS = ['EUR', 'USD', 'gold', 'web', 'p-1', 'p-2', 'sku-1', 'sku-2', 'ada@example.com', '', 'a', ...SEGMENTS];
const FIELDS = [...CONDITION_FIELDS, 'order.metadata.k', 'order.metadata.list', 'customer.metadata.k', 'customer.metadata.obj'];

const scalar = fc.oneof(fc.constantFrom(...WORDS), fc.integer({ min: -2, max: 12 }), fc.boolean());
const isoInstant = fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString());

const leaf: fc.Arbitrary<ConditionLeaf> = fc
  .record({ field: fc.constantFrom(...FIELDS), op: fc.constantFrom(...CONDITION_OPS) })
  .chain(({ field, op }): fc.Arbitrary<ConditionLeaf> => {
    const f = field as ConditionLeaf['field'];
    switch (op) {
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return (field === 'customer.createdAt' ? isoInstant : fc.integer({ min: -2, max: 12 })).map((value) => ({ field: f, op, value }));
      case 'in':
      case 'notIn':
        return fc.array(scalar, { minLength: 1, maxLength: 3 }).map((value) => ({ field: f, op, value }));
      case 'exists':
        return fc.option(fc.boolean(), { nil: undefined }).map((value) => (value === undefined ? { field: f, op } : { field: f, op, value }));
      default:
        return scalar.map((value) => ({ field: f, op, value }));
    }
  });

const { tree } = fc.letrec<{ tree: ConditionTree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('tree'), { minLength: 1, maxLength: 3 }).map((all) => ({ all })),
    fc.array(tie('tree'), { minLength: 1, maxLength: 3 }).map((any) => ({ any })),
    tie('tree').map((not) => ({ not })),
  ),
}));

/** Trees at most 6 levels deep, so the laws below can wrap them in up to 3 more levels and stay valid. */
const shallowTree = tree.filter((t) => depthOf(t) <= 6 && countOf(t) <= 40);

function depthOf(t: ConditionTree): number {
  if ('all' in t) return 1 + Math.max(...t.all.map(depthOf));
  if ('any' in t) return 1 + Math.max(...t.any.map(depthOf));
  if ('not' in t) return 1 + depthOf(t.not);
  return 1;
}

function countOf(t: ConditionTree): number {
  if ('all' in t) return 1 + t.all.reduce((n, c) => n + countOf(c), 0);
  if ('any' in t) return 1 + t.any.reduce((n, c) => n + countOf(c), 0);
  if ('not' in t) return 1 + countOf(t.not);
  return 1;
}

const item = fc.record(
  { productId: fc.constantFrom('p-1', 'p-2', 'p-3'), sku: fc.constantFrom('sku-1', 'sku-2'), quantity: fc.integer({ min: 1, max: 5 }), price: fc.integer({ min: 0, max: 5000 }) },
  { requiredKeys: ['quantity', 'price'] },
);
const metadataValue = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.constant(null), fc.constant({ nested: 1 }));

const facts: fc.Arbitrary<RuleFacts> = fc.record(
  {
    order: fc.record(
      {
        amount: fc.integer({ min: 0, max: 20 }),
        currency: fc.constantFrom('EUR', 'USD'),
        items: fc.array(item, { maxLength: 4 }),
        metadata: fc.record({ k: metadataValue, list: metadataValue }, { requiredKeys: [] }),
      },
      { requiredKeys: ['amount', 'currency'] },
    ),
    customer: fc.record(
      {
        id: fc.option(fc.constant('c0ffee00-0000-4000-8000-000000000001'), { nil: null }),
        sourceId: fc.option(fc.constantFrom('a', 'gold'), { nil: null }),
        email: fc.option(fc.constantFrom('ada@example.com', 'a'), { nil: null }),
        name: fc.option(fc.constantFrom('Ada', 'gold'), { nil: null }),
        createdAt: fc.option(isoInstant, { nil: null }),
        segments: fc.subarray(SEGMENTS),
        metadata: fc.record({ k: metadataValue, obj: metadataValue }, { requiredKeys: [] }),
        redemptions: fc.integer({ min: 0, max: 5 }),
      },
      { requiredKeys: ['id', 'segments', 'metadata'] },
    ),
    time: fc.record({ dayOfWeek: fc.integer({ min: 0, max: 6 }), hour: fc.integer({ min: 0, max: 23 }) }),
  },
  { requiredKeys: [] },
);

const applicableTo = fc.option(
  fc.oneof(fc.record({ productIds: fc.subarray(['p-1', 'p-2'], { minLength: 1 }) }), fc.record({ skus: fc.subarray(['sku-1', 'sku-2'], { minLength: 1 }) })),
  { nil: undefined },
);

const ok = (t: ConditionTree, f: RuleFacts, a?: { productIds?: string[]; skus?: string[] }) => evaluateConditions(t, f, a).ok;

/** The node a failure path names: '' is the root, then /all/i, /any/i and /not steps. */
function nodeAt(root: ConditionTree, path: string): ConditionTree | undefined {
  let node: unknown = root;
  for (const step of path.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return node as ConditionTree | undefined;
}

function firstLeaf(t: ConditionTree): ConditionLeaf {
  if ('all' in t) return firstLeaf(t.all[0]!);
  if ('any' in t) return firstLeaf(t.any[0]!);
  if ('not' in t) return firstLeaf(t.not);
  return t;
}

const runs = { numRuns: 400 };

describe('condition evaluator laws', () => {
  it('generates only trees the schema accepts', () => {
    fc.assert(
      fc.property(shallowTree, (t) => {
        expect(ConditionTree.safeParse(t).success).toBe(true);
      }),
      runs,
    );
  });

  it('not of a tree inverts it, and double negation is the tree', () => {
    fc.assert(
      fc.property(shallowTree, facts, applicableTo, (t, f, a) => {
        expect(ok({ not: t }, f, a)).toBe(!ok(t, f, a));
        expect(ok({ not: { not: t } }, f, a)).toBe(ok(t, f, a));
      }),
      runs,
    );
  });

  it('all and any of one tree are that tree', () => {
    fc.assert(
      fc.property(shallowTree, facts, applicableTo, (t, f, a) => {
        expect(ok({ all: [t] }, f, a)).toBe(ok(t, f, a));
        expect(ok({ any: [t] }, f, a)).toBe(ok(t, f, a));
      }),
      runs,
    );
  });

  it('all is every child and any is some child', () => {
    fc.assert(
      fc.property(fc.array(shallowTree, { minLength: 1, maxLength: 4 }), facts, applicableTo, (ts, f, a) => {
        expect(ok({ all: ts }, f, a)).toBe(ts.every((t) => ok(t, f, a)));
        expect(ok({ any: ts }, f, a)).toBe(ts.some((t) => ok(t, f, a)));
      }),
      runs,
    );
  });

  it('De Morgan: not all is any of nots, not any is all of nots', () => {
    fc.assert(
      fc.property(fc.array(shallowTree, { minLength: 1, maxLength: 4 }), facts, applicableTo, (ts, f, a) => {
        expect(ok({ not: { all: ts } }, f, a)).toBe(ok({ any: ts.map((t) => ({ not: t })) }, f, a));
        expect(ok({ not: { any: ts } }, f, a)).toBe(ok({ all: ts.map((t) => ({ not: t })) }, f, a));
      }),
      runs,
    );
  });

  it('never throws, and a failure names a node of the tree and the leaf behind it', () => {
    fc.assert(
      fc.property(shallowTree, facts, applicableTo, (t, f, a) => {
        const result = evaluateConditions(t, f, a);
        if (result.ok) return;
        const node = nodeAt(t, result.path);
        expect(node, result.path).toBeDefined();
        // A failing leaf names itself; a failing `not` names its operand (path ending in /not) and that operand's first leaf.
        expect(result.leaf).toBe(firstLeaf(node!));
        if (!result.path.endsWith('/not')) expect(result.leaf).toBe(node);
      }),
      runs,
    );
  });

  it('parses any JSON without throwing, and evaluates whatever it accepts', () => {
    const json = fc.oneof(fc.jsonValue({ maxDepth: 6 }), tree.map((t) => mutate(t)));
    fc.assert(
      fc.property(json, facts, (input, f) => {
        const parsed = ConditionTree.safeParse(input);
        if (parsed.success) evaluateConditions(parsed.data, f);
      }),
      runs,
    );
  });
});

/** A tree with one of its leaves' op or value replaced by something else. */
function mutate(t: ConditionTree): unknown {
  const text = JSON.stringify(t);
  return JSON.parse(text.replace(/"op":"[a-zA-Z]+"/, '"op":"in"').replace(/"value":(\[[^\]]*\]|"[^"]*"|[^,}]+)/, '"value":{}'));
}
