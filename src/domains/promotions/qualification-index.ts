// The qualification index of one workspace: its active promotion tiers, bucketed by what cheaply excludes them, so a
// cart is checked against a handful of candidates instead of every tier. Pure: built from snapshots, queried by order.
//
// Exclusions read from each tier's rules, only where they are necessary conditions (the top-level conjunction of a
// rule: `all` nodes and leaves; nothing under `any` or `not`): a minimum order amount (`order.amount` gt/gte), a
// currency (the tier's or its campaign's, or an `order.currency` eq leaf), and product ids or skus the cart must
// contain (`order.items.productId` / `order.items.sku` with eq, contains or in). A tier without such conditions is a
// candidate for every cart of its currency at or above its minimum. Candidates are then decided in full.
import type { ConditionTree } from '../../contract/condition.schemas.js';
import { voucherCurrency, type VoucherSnapshot } from '../../checkout/redemption.rules.js';
import type { Order } from '../../contract/checkout.schemas.js';

interface Requirement {
  minAmount: number;
  currency: string | null;
  /** The cart must hold one of these (`p:<productId>` or `s:<sku>`); null: no product condition. */
  anyOf: string[] | null;
}

export interface IndexedTier {
  snapshot: VoucherSnapshot;
  minAmount: number;
}

interface Bucket {
  /** Tiers without a product condition, by minimum amount ascending. */
  general: IndexedTier[];
  byProduct: Map<string, IndexedTier[]>;
}

const ANY_CURRENCY = '*';

function necessary(tree: ConditionTree, into: Requirement): void {
  if ('all' in tree) {
    for (const child of tree.all) necessary(child, into);
    return;
  }
  if ('any' in tree || 'not' in tree) return;
  const { field, op, value } = tree as { field: string; op: string; value?: unknown };
  if (field === 'order.amount' && typeof value === 'number') {
    if (op === 'gte') into.minAmount = Math.max(into.minAmount, Math.ceil(value));
    if (op === 'gt') into.minAmount = Math.max(into.minAmount, Math.floor(value) + 1);
    if (op === 'eq') into.minAmount = Math.max(into.minAmount, Math.ceil(value));
  } else if (field === 'order.currency' && op === 'eq' && typeof value === 'string') {
    into.currency = value;
  } else if (field === 'order.items.productId' || field === 'order.items.sku') {
    const prefix = field === 'order.items.productId' ? 'p:' : 's:';
    const values = op === 'in' && Array.isArray(value) ? value : op === 'eq' || op === 'contains' ? [value] : null;
    // The narrowest product condition wins: fewer keys, fewer carts it is a candidate for.
    if (values && (into.anyOf === null || values.length < into.anyOf.length)) into.anyOf = values.map((v) => prefix + String(v));
  }
}

export function requirementOf(tier: VoucherSnapshot): Requirement {
  const req: Requirement = { minAmount: 0, currency: voucherCurrency(tier), anyOf: null };
  for (const rule of tier.rules) necessary(rule.conditions, req);
  return req;
}

export class QualificationIndex {
  private readonly buckets = new Map<string, Bucket>();
  readonly size: number;

  constructor(tiers: readonly VoucherSnapshot[]) {
    let size = 0;
    for (const tier of tiers) {
      // Switched off for good until a change rebuilds the index: no need to look at them per cart.
      if (!tier.active || (tier.campaign && !tier.campaign.active)) continue;
      const req = requirementOf(tier);
      const bucket = this.bucket(req.currency ?? ANY_CURRENCY);
      const indexed: IndexedTier = { snapshot: tier, minAmount: req.minAmount };
      if (req.anyOf === null) bucket.general.push(indexed);
      else for (const key of new Set(req.anyOf)) bucket.byProduct.set(key, [...(bucket.byProduct.get(key) ?? []), indexed]);
      size += 1;
    }
    for (const bucket of this.buckets.values()) bucket.general.sort((a, b) => a.minAmount - b.minAmount);
    this.size = size;
  }

  private bucket(currency: string): Bucket {
    let bucket = this.buckets.get(currency);
    if (!bucket) this.buckets.set(currency, (bucket = { general: [], byProduct: new Map() }));
    return bucket;
  }

  /** The tiers a cart could qualify for: every one left out is certain not to apply. */
  candidates(order: Order): VoucherSnapshot[] {
    const found = new Map<string, VoucherSnapshot>();
    const keys = new Set<string>();
    for (const item of order.items ?? []) {
      if (item.productId !== undefined) keys.add(`p:${item.productId}`);
      if (item.sku !== undefined) keys.add(`s:${item.sku}`);
    }
    for (const currency of [order.currency, ANY_CURRENCY]) {
      const bucket = this.buckets.get(currency);
      if (!bucket) continue;
      const end = upperBound(bucket.general, order.amount);
      for (let i = 0; i < end; i++) found.set(bucket.general[i]!.snapshot.id, bucket.general[i]!.snapshot);
      for (const key of keys) {
        for (const t of bucket.byProduct.get(key) ?? []) if (t.minAmount <= order.amount) found.set(t.snapshot.id, t.snapshot);
      }
    }
    return [...found.values()];
  }
}

/** Number of tiers with minAmount <= amount (the list is sorted by minAmount). */
function upperBound(list: readonly IndexedTier[], amount: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.minAmount <= amount) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
