// Evaluates a condition tree over the facts of one decision (order, customer, local time); pure and total.
//
// A field resolves to one of: missing; a scalar; a list (order.items.productId, order.items.sku, customer.segments,
// and a metadata value that is an array); or an opaque value (a metadata object). Ops:
// - missing (no order, no customer, null, absent key): every op is false except `ne` and `notIn` (true) and
//   `exists` (true only with value false). An empty list counts as missing.
// - lists: `contains v` / `eq v` = some element equals v; `ne v` = no element equals v; `in [..]` = some element is in
//   the array; `notIn [..]` = none is; gt/gte/lt/lte = some element compares so; `exists` = non-empty.
// - scalars: eq/ne strict equality (1 ≠ "1", case-sensitive); `in`/`notIn` membership; `contains` is a substring test
//   on strings (false on other types); gt/gte/lt/lte only between numbers, except customer.createdAt, which compares
//   as an instant with an ISO 8601 value (the same order as its UTC ISO strings).
// - opaque values exist and equal nothing.
// order.items.* look at the items that match applicableTo (all items without it) and the leaf's target (all without
// one); an order without items has none (count, quantity and amount 0). order.items.amount sums quantity × price. customer.redemptions is supplied by the caller; time.* come from ZoneCalendar.timeFacts() (contract/zone-calendar.ts).
import type { Order } from '../contract/checkout.schemas.js';
import type { ApplicableTo, ConditionLeaf, ConditionScalar, ConditionTree } from '../contract/condition.schemas.js';
import type { Target } from '../contract/target.schemas.js';
import { targetMatches } from './item-target.rules.js';

export interface CustomerFacts {
  id: string | null;
  sourceId?: string | null;
  email?: string | null;
  name?: string | null;
  createdAt?: string | null;
  segments: readonly string[];
  metadata: Record<string, unknown>;
  redemptions?: number;
}

export interface RuleFacts {
  order?: Order | undefined;
  customer?: CustomerFacts | undefined;
  time?: { dayOfWeek: number; hour: number } | undefined;
}

export type ConditionResult = { ok: true } | { ok: false; path: string; leaf: ConditionLeaf };

type Resolved =
  | { kind: 'missing' }
  | { kind: 'scalar'; value: ConditionScalar }
  | { kind: 'list'; values: readonly unknown[] }
  | { kind: 'opaque' };

const MISSING: Resolved = { kind: 'missing' };
const OK: ConditionResult = { ok: true };

export function itemMatches(item: { productId?: string | undefined; sku?: string | undefined }, applicableTo: ApplicableTo | null | undefined): boolean {
  const productIds = applicableTo?.productIds ?? [];
  const skus = applicableTo?.skus ?? [];
  // No list to match against (never accepted by the schema): no restriction.
  if (productIds.length === 0 && skus.length === 0) return true;
  return (item.productId !== undefined && productIds.includes(item.productId)) || (item.sku !== undefined && skus.includes(item.sku));
}

function fromValue(value: unknown): Resolved {
  if (value === undefined || value === null) return MISSING;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return { kind: 'scalar', value };
  if (Array.isArray(value)) return value.length ? { kind: 'list', values: value } : MISSING;
  return { kind: 'opaque' };
}

function metadataValue(metadata: Record<string, unknown> | undefined, key: string): unknown {
  return metadata && Object.hasOwn(metadata, key) ? metadata[key] : undefined;
}

function resolveOrderItems(order: Order, field: string, applicableTo: ApplicableTo | null | undefined, target: Target | undefined): Resolved {
  const items = (order.items ?? []).filter((item) => itemMatches(item, applicableTo) && (target === undefined || targetMatches(item, target)));
  switch (field) {
    case 'order.items.count':
      return { kind: 'scalar', value: items.length };
    case 'order.items.quantity':
      return { kind: 'scalar', value: items.reduce((sum, item) => sum + item.quantity, 0) };
    case 'order.items.amount':
      return { kind: 'scalar', value: items.reduce((sum, item) => sum + item.quantity * item.price, 0) };
    case 'order.items.productId':
      return fromValue(items.flatMap((item) => (item.productId === undefined ? [] : [item.productId])));
    case 'order.items.sku':
      return fromValue(items.flatMap((item) => (item.sku === undefined ? [] : [item.sku])));
    default:
      return MISSING;
  }
}

function resolveOrder(order: Order | undefined, field: string, applicableTo: ApplicableTo | null | undefined, target: Target | undefined): Resolved {
  if (!order) return MISSING;
  if (field === 'order.amount') return fromValue(order.amount);
  if (field === 'order.currency') return fromValue(order.currency);
  if (field.startsWith('order.metadata.')) return fromValue(metadataValue(order.metadata, field.slice('order.metadata.'.length)));
  return resolveOrderItems(order, field, applicableTo, target);
}

function resolveCustomer(customer: CustomerFacts | undefined, field: string): Resolved {
  if (!customer) return MISSING;
  if (field.startsWith('customer.metadata.')) return fromValue(metadataValue(customer.metadata, field.slice('customer.metadata.'.length)));
  switch (field) {
    case 'customer.id':
      return fromValue(customer.id);
    case 'customer.sourceId':
      return fromValue(customer.sourceId);
    case 'customer.email':
      return fromValue(customer.email);
    case 'customer.name':
      return fromValue(customer.name);
    case 'customer.createdAt':
      return fromValue(customer.createdAt);
    case 'customer.segments':
      return fromValue(customer.segments);
    case 'customer.redemptions':
      return fromValue(customer.redemptions);
    default:
      return MISSING;
  }
}

function resolveField(leaf: ConditionLeaf, facts: RuleFacts, applicableTo: ApplicableTo | null | undefined): Resolved {
  const field = leaf.field;
  if (field.startsWith('order.')) return resolveOrder(facts.order, field, applicableTo, leaf.target);
  if (field.startsWith('customer.')) return resolveCustomer(facts.customer, field);
  if (field === 'time.dayOfWeek') return fromValue(facts.time?.dayOfWeek);
  if (field === 'time.hour') return fromValue(facts.time?.hour);
  return MISSING;
}

function compare(op: string, a: number, b: number): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return false;
  return op === 'gt' ? a > b : op === 'gte' ? a >= b : op === 'lt' ? a < b : a <= b;
}

/** gt/gte/lt/lte of one value: numbers with numbers; createdAt (an ISO string) with an ISO string, as instants. */
function ordered(op: string, actual: unknown, expected: unknown, field: string): boolean {
  if (typeof actual === 'number' && typeof expected === 'number') return compare(op, actual, expected);
  if (field === 'customer.createdAt' && typeof actual === 'string' && typeof expected === 'string') {
    return compare(op, Date.parse(actual), Date.parse(expected));
  }
  return false;
}

function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function holdsOne(leaf: ConditionLeaf, actual: unknown): boolean {
  const value: unknown = leaf.value;
  switch (leaf.op) {
    case 'eq':
      return actual === value;
    case 'in':
      return listOf(value).includes(actual);
    case 'contains':
      return typeof actual === 'string' && typeof value === 'string' && actual.includes(value);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return ordered(leaf.op, actual, value, leaf.field);
    default:
      return false;
  }
}

function holds(leaf: ConditionLeaf, resolved: Resolved): boolean {
  if (leaf.op === 'exists') return (resolved.kind !== 'missing') === (leaf.value ?? true);
  if (resolved.kind === 'missing') return leaf.op === 'ne' || leaf.op === 'notIn';
  if (resolved.kind === 'opaque') return leaf.op === 'ne' || leaf.op === 'notIn';
  if (resolved.kind === 'scalar') {
    if (leaf.op === 'ne') return resolved.value !== leaf.value;
    if (leaf.op === 'notIn') return !listOf(leaf.value).includes(resolved.value);
    return holdsOne(leaf, resolved.value);
  }
  const values = resolved.values;
  switch (leaf.op) {
    case 'contains':
    case 'eq':
      return values.includes(leaf.value);
    case 'ne':
      return !values.includes(leaf.value);
    case 'notIn':
      return !values.some((v) => listOf(leaf.value).includes(v));
    default:
      return values.some((v) => holdsOne(leaf, v));
  }
}

function firstLeaf(tree: ConditionTree): ConditionLeaf {
  let node = tree;
  for (;;) {
    if ('all' in node) node = node.all[0]!;
    else if ('any' in node) node = node.any[0]!;
    else if ('not' in node) node = node.not;
    else return node;
  }
}

function evaluateAt(tree: ConditionTree, facts: RuleFacts, applicableTo: ApplicableTo | null | undefined, path: string): ConditionResult {
  if ('all' in tree) {
    for (let i = 0; i < tree.all.length; i++) {
      const result = evaluateAt(tree.all[i]!, facts, applicableTo, `${path}/all/${i}`);
      if (!result.ok) return result;
    }
    return OK;
  }
  if ('any' in tree) {
    let first: ConditionResult | undefined;
    for (let i = 0; i < tree.any.length; i++) {
      const result = evaluateAt(tree.any[i]!, facts, applicableTo, `${path}/any/${i}`);
      if (result.ok) return OK;
      first ??= result;
    }
    return first ?? OK;
  }
  if ('not' in tree) {
    const operand = `${path}/not`;
    return evaluateAt(tree.not, facts, applicableTo, operand).ok ? { ok: false, path: operand, leaf: firstLeaf(tree.not) } : OK;
  }
  return holds(tree, resolveField(tree, facts, applicableTo)) ? OK : { ok: false, path, leaf: tree };
}

/**
 * Whether the tree holds for the facts. A failure names one leaf and a JSON pointer into the tree ('' is the root):
 * for `all` the first failing child's, for `any` its first child's; a `not` whose operand held fails with the
 * pointer of its operand (`/any/0/not`) and the operand's first leaf. The leaf is always the first leaf at the path.
 */
export function evaluateConditions(tree: ConditionTree, facts: RuleFacts, applicableTo?: ApplicableTo | null): ConditionResult {
  return evaluateAt(tree, facts, applicableTo, '');
}
