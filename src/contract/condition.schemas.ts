// Condition trees: `{ all }`, `{ any }`, `{ not }` and leaves `{ field, op, value }`, refused with the path of the bad
// node when malformed; the evaluator is condition.rules.ts. Also ApplicableTo, which narrows the order.items.* fields.
import { z } from 'zod';
import { Target } from './target.schemas.js';

export const CONDITION_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'notIn', 'contains', 'exists'] as const;
export const ConditionOp = z.enum(CONDITION_OPS).meta({ id: 'ConditionOp' });
export type ConditionOp = z.infer<typeof ConditionOp>;

export const ORDER_FIELDS = [
  'order.amount',
  'order.currency',
  'order.items.count',
  'order.items.quantity',
  'order.items.amount',
  'order.items.productId',
  'order.items.sku',
] as const;
export const CUSTOMER_FIELDS = [
  'customer.id',
  'customer.sourceId',
  'customer.email',
  'customer.name',
  'customer.createdAt',
  'customer.segments',
  'customer.redemptions',
] as const;
export const TIME_FIELDS = ['time.dayOfWeek', 'time.hour'] as const;
export const CONDITION_FIELDS = [...ORDER_FIELDS, ...CUSTOMER_FIELDS, ...TIME_FIELDS] as const;

/** The key after `order.metadata.` / `customer.metadata.` is taken whole (dots included), as Metadata keys are. */
export const METADATA_FIELD = /^(order|customer)\.metadata\.(.{1,100})$/;

export type ConditionField = (typeof CONDITION_FIELDS)[number] | `order.metadata.${string}` | `customer.metadata.${string}`;

const UNKNOWN_FIELD = `unknown field: use one of ${CONDITION_FIELDS.join(', ')}, order.metadata.<key> or customer.metadata.<key>`;

export function isConditionField(field: string): field is ConditionField {
  return (CONDITION_FIELDS as readonly string[]).includes(field) || METADATA_FIELD.test(field);
}

export const ConditionFieldName = z
  .string()
  .refine(isConditionField, { message: UNKNOWN_FIELD, abort: true })
  .meta({
    anyOf: [{ enum: [...CONDITION_FIELDS] }, { pattern: METADATA_FIELD.source }],
    description: 'What the leaf looks at; `order.metadata.<key>` and `customer.metadata.<key>` take any non-empty key (dots included).',
  });

export const ConditionScalar = z.union([z.string().max(1000), z.number(), z.boolean()]);
export type ConditionScalar = z.infer<typeof ConditionScalar>;

/** `target` (order.items.* fields only) narrows the items the leaf counts, sums or lists to those it matches. */
export type ConditionLeaf = { target?: Target | undefined } & (
  | { field: ConditionField; op: 'eq' | 'ne' | 'contains'; value: ConditionScalar }
  | { field: ConditionField; op: 'gt' | 'gte' | 'lt' | 'lte'; value: number | string }
  | { field: ConditionField; op: 'in' | 'notIn'; value: ConditionScalar[] }
  | { field: ConditionField; op: 'exists'; value?: boolean | undefined }
);

export type ConditionTree = { all: ConditionTree[] } | { any: ConditionTree[] } | { not: ConditionTree } | ConditionLeaf;

export const MAX_CONDITION_DEPTH = 10;
export const MAX_CONDITION_NODES = 200;
const MAX_CHILDREN = MAX_CONDITION_NODES;
const MAX_IN_VALUES = 1000;

const NODE_KINDS = 'a condition is exactly one of { all: [...] }, { any: [...] }, { not: {...} } or a leaf { field, op, value }';

type NodeFields = { all?: unknown; any?: unknown; not?: unknown; field?: unknown; op?: unknown; value?: unknown; target?: unknown };

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

function valueProblem(op: ConditionOp, value: unknown, field: unknown): string | undefined {
  switch (op) {
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (field === 'customer.createdAt') {
        return typeof value === 'string' && ISO_INSTANT.test(value) && !Number.isNaN(Date.parse(value))
          ? undefined
          : `${op} on customer.createdAt needs an ISO 8601 date or timestamp (2026-01-31 or 2026-01-31T10:00:00Z)`;
      }
      return typeof value === 'number' ? undefined : `${op} needs a number`;
    case 'in':
    case 'notIn':
      return Array.isArray(value) && value.length > 0 ? undefined : `${op} needs a non-empty array of strings, numbers or booleans`;
    case 'exists':
      return value === undefined || typeof value === 'boolean' ? undefined : 'exists takes true, false or no value';
    default:
      return value !== undefined && !Array.isArray(value) ? undefined : `${op} needs one string, number or boolean`;
  }
}

/**
 * One node: exactly one kind, and a value that fits the op. Children are checked by their own node schema. Issues
 * abort (continue: false), so no later refinement ever sees a malformed tree.
 */
function checkNode(node: NodeFields, ctx: z.RefinementCtx): void {
  const isLeaf = node.field !== undefined || node.op !== undefined || node.value !== undefined || node.target !== undefined;
  const kinds = [node.all, node.any, node.not].filter((k) => k !== undefined).length + (isLeaf ? 1 : 0);
  if (kinds !== 1) {
    ctx.addIssue({ code: 'custom', continue: false, message: NODE_KINDS });
    return;
  }
  if (!isLeaf) return;
  if (node.field === undefined) ctx.addIssue({ code: 'custom', continue: false, message: 'a leaf needs a field', path: ['field'] });
  if (node.op === undefined) {
    ctx.addIssue({ code: 'custom', continue: false, message: 'a leaf needs an op', path: ['op'] });
    return;
  }
  if (node.target !== undefined && !(typeof node.field === 'string' && node.field.startsWith('order.items.'))) {
    ctx.addIssue({ code: 'custom', continue: false, message: 'target narrows the order.items.* fields only', path: ['target'] });
    return;
  }
  const problem = valueProblem(node.op as ConditionOp, node.value, node.field);
  if (problem) ctx.addIssue({ code: 'custom', continue: false, message: problem, path: ['value'] });
}

/** The first size problem of a tree, found without recursion and given up past the limits (the input may be anything). */
function sizeIssue(root: unknown): { path: (string | number)[]; message: string } | undefined {
  const stack: Array<{ node: unknown; path: (string | number)[]; depth: number }> = [{ node: root, path: [], depth: 1 }];
  let count = 0;
  while (stack.length) {
    const { node, path, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) continue;
    if (++count > MAX_CONDITION_NODES) return { path: [], message: `a condition tree has at most ${MAX_CONDITION_NODES} nodes` };
    if (depth > MAX_CONDITION_DEPTH) return { path, message: `a condition tree is at most ${MAX_CONDITION_DEPTH} levels deep` };
    const { all, any, not } = node as NodeFields;
    if (not !== undefined) stack.push({ node: not, path: [...path, 'not'], depth: depth + 1 });
    for (const key of ['any', 'all'] as const) {
      const children = key === 'all' ? all : any;
      if (!Array.isArray(children)) continue;
      for (let i = Math.min(children.length, MAX_CHILDREN + 1) - 1; i >= 0; i--) stack.push({ node: children[i], path: [...path, key, i], depth: depth + 1 });
    }
  }
  return undefined;
}

// Children are parsed by the node schema from inside a refinement rather than by a recursive schema: the OpenAPI
// document must hold no cycle (the request validator dereferences it), so there a child is just "an object".
const NestedCondition = z
  .unknown()
  .superRefine((value, ctx) => {
    const result = ConditionNode.safeParse(value);
    if (!result.success) for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', continue: false, message: issue.message, path: issue.path });
  })
  .meta({ type: 'object', description: 'A nested condition, shaped like ConditionTree.' });

const ConditionNode = z
  .strictObject({
    all: z.array(NestedCondition).min(1, 'all needs at least one condition').max(MAX_CHILDREN).optional(),
    any: z.array(NestedCondition).min(1, 'any needs at least one condition').max(MAX_CHILDREN).optional(),
    not: NestedCondition.optional(),
    field: ConditionFieldName.optional(),
    target: Target.optional().meta({ description: 'order.items.* fields only: count, sum or list just the items this target matches.' }),
    op: ConditionOp.optional(),
    value: z
      .union([ConditionScalar, z.array(ConditionScalar).min(1).max(MAX_IN_VALUES)])
      .optional()
      .meta({
        description:
          'gt/gte/lt/lte: a number (customer.createdAt: an ISO 8601 date or timestamp); in/notIn: a non-empty array; eq/ne/contains: one string, number or boolean; exists: true (default) or false.',
      }),
  })
  .superRefine(checkNode);

// Size and depth are checked first, without recursion, so a deep or huge input is refused before any child is parsed.
export const ConditionTree: z.ZodType<ConditionTree, ConditionTree> = z
  .preprocess((input, ctx) => {
    const issue = sizeIssue(input);
    if (issue) ctx.addIssue({ code: 'custom', continue: false, input, ...issue });
    return input;
  }, ConditionNode)
  .meta({
    id: 'ConditionTree',
    description:
      `${NODE_KINDS}. At most ${MAX_CONDITION_DEPTH} levels and ${MAX_CONDITION_NODES} nodes. On list fields (order.items.productId, ` +
      'order.items.sku, customer.segments) eq and contains mean "includes", ne "excludes", in "some element is listed", notIn ' +
      '"none is listed", exists "non-empty". A missing field fails every op except ne and notIn, and exists with value false. ' +
      'order.items.quantity sums the units, order.items.amount the line totals (quantity × price) of the items a leaf\'s ' +
      '`target` matches (every item without one).',
  }) as never;

export const ApplicableTo = z
  .strictObject({
    productIds: z.array(z.string().min(1).max(200)).max(1000).optional(),
    skus: z.array(z.string().min(1).max(200)).max(1000).optional(),
  })
  .refine((a) => Boolean(a.productIds?.length || a.skus?.length), { message: 'name at least one productId or sku' })
  .meta({ id: 'ApplicableTo', description: 'Restricts the order.items.* fields to the items whose productId or sku is listed.' });
export type ApplicableTo = z.infer<typeof ApplicableTo>;

/** Every leaf of a tree with its path (`/all/0/not`), in order. */
export function conditionLeaves(tree: ConditionTree, path = ''): Array<{ leaf: ConditionLeaf; path: string }> {
  if ('all' in tree) return tree.all.flatMap((child, i) => conditionLeaves(child, `${path}/all/${i}`));
  if ('any' in tree) return tree.any.flatMap((child, i) => conditionLeaves(child, `${path}/any/${i}`));
  if ('not' in tree) return conditionLeaves(tree.not, `${path}/not`);
  return [{ leaf: tree, path }];
}
