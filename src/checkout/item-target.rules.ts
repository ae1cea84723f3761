// Which order items a Target names: an item matches when it meets every field the target gives; a list field matches
// an item holding one of its values (productId, sku: the item's own; categories, collections: any of the item's);
// metadata matches when each of its keys is in the item's metadata with a strictly equal value.
import type { Target } from '../contract/target.schemas.js';

/** The facts of an order item a target reads. */
export interface ItemFacts {
  productId?: string | undefined;
  sku?: string | undefined;
  categories?: readonly string[] | undefined;
  collections?: readonly string[] | undefined;
  metadata?: Readonly<Record<string, unknown>> | undefined;
}

const holdsOneOf = (held: readonly string[] | undefined, wanted: readonly string[]): boolean => held !== undefined && held.some((v) => wanted.includes(v));

export function targetMatches(item: ItemFacts, target: Target): boolean {
  if (target.productIds && (item.productId === undefined || !target.productIds.includes(item.productId))) return false;
  if (target.skus && (item.sku === undefined || !target.skus.includes(item.sku))) return false;
  if (target.categories && !holdsOneOf(item.categories, target.categories)) return false;
  if (target.collections && !holdsOneOf(item.collections, target.collections)) return false;
  if (target.metadata) {
    const metadata = item.metadata;
    for (const key of Object.keys(target.metadata)) {
      if (!metadata || !Object.hasOwn(metadata, key) || metadata[key] !== target.metadata[key]) return false;
    }
  }
  return true;
}

/** Indexes of the items a target matches (every index without a target), within `only` when given. */
export function matchingItems(items: readonly ItemFacts[], target: Target | undefined, only?: readonly number[]): number[] {
  const indexes = only ?? items.map((_, i) => i);
  return target ? indexes.filter((i) => targetMatches(items[i]!, target)) : [...indexes];
}
