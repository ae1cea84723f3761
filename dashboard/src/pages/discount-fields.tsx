// The discount a campaign template or a promotion tier gives: percent or amount off (optionally on target items only),
// free shipping, or buy X get Y. Text fields while editing; `discountFrom` turns them into the API's Discount.
import type { InputOf } from '../../../src/client/operation-types.js';
import { money } from '../components.js';

export type Discount = InputOf<'promotions.createTier'>['discount'];
type Target = NonNullable<Extract<Discount, { type: 'PERCENT' }>['target']>;
export type DiscountKind = 'percent' | 'amount' | 'free-shipping' | 'buy-x-get-y';

export interface ItemsDraft {
  categories: string;
  collections: string;
  productIds: string;
  skus: string;
  buyQuantity: string;
  getQuantity: string;
  getCategories: string;
  getPercentOff: string;
  maxApplications: string;
}

/** "12.50" → 1250 minor units; undefined when it is not an amount with at most two decimals. */
export function minorUnits(text: string): number | undefined {
  const match = /^(\d{1,13})(?:[.,](\d{1,2}))?$/.exec(text.trim());
  return match ? Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0')) : undefined;
}

const listOf = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);
const textOf = (list: readonly string[] | undefined) => (list ?? []).join(', ');

function targetOf(d: Pick<ItemsDraft, 'categories' | 'collections' | 'productIds' | 'skus'>): Target | undefined {
  const fields = { categories: listOf(d.categories), collections: listOf(d.collections), productIds: listOf(d.productIds), skus: listOf(d.skus) };
  const target = Object.fromEntries(Object.entries(fields).filter(([, v]) => v.length)) as Target;
  return Object.keys(target).length ? target : undefined;
}

export function kindOf(d: Discount | null | undefined): DiscountKind | undefined {
  if (d?.type === 'PERCENT') return 'percent';
  if (d?.type === 'AMOUNT') return 'amount';
  if (d?.type === 'FREE_SHIPPING') return 'free-shipping';
  if (d?.type === 'BUY_X_GET_Y') return 'buy-x-get-y';
  return undefined;
}

export function itemsDraftOf(d: Discount | null | undefined): ItemsDraft {
  const target = d?.type === 'BUY_X_GET_Y' ? d.buy.target : d && 'target' in d ? d.target : undefined;
  const bxgy = d?.type === 'BUY_X_GET_Y' ? d : undefined;
  return {
    categories: textOf(target?.categories),
    collections: textOf(target?.collections),
    productIds: textOf(target?.productIds),
    skus: textOf(target?.skus),
    buyQuantity: String(bxgy?.buy.quantity ?? 2),
    getQuantity: String(bxgy?.get.quantity ?? 1),
    getCategories: textOf(bxgy?.get.target?.categories),
    getPercentOff: String(bxgy?.get.percentOff ?? 100),
    maxApplications: bxgy?.maxApplications === undefined ? '' : String(bxgy.maxApplications),
  };
}

const whole = (text: string) => (/^\d{1,7}$/.test(text.trim()) && Number(text) >= 1 ? Number(text) : undefined);

/** The Discount the fields describe, or what is wrong with them. */
export function discountFrom(kind: DiscountKind, value: string, items: ItemsDraft): Discount | string {
  const target = targetOf(items);
  if (kind === 'free-shipping') return { type: 'FREE_SHIPPING' };
  if (kind === 'percent') {
    const p = Number(value);
    if (!(p > 0 && p <= 100)) return 'Percent off must be more than 0 and at most 100.';
    return { type: 'PERCENT', percentOff: p, ...(target ? { target } : {}) };
  }
  if (kind === 'amount') {
    const minor = minorUnits(value);
    if (minor === undefined) return 'The amount needs digits with at most two decimals, e.g. 12.50.';
    return { type: 'AMOUNT', amountOff: minor, ...(target ? { target } : {}) };
  }
  if (!target) return 'Buy X get Y needs the items bought: a category, collection, product or SKU.';
  const buy = whole(items.buyQuantity);
  const get = whole(items.getQuantity);
  if (buy === undefined || get === undefined) return 'Buy and get quantities must be whole numbers from 1.';
  const percentOff = Number(items.getPercentOff || '100');
  if (!(percentOff > 0 && percentOff <= 100)) return 'Percent off the units given must be more than 0 and at most 100.';
  const max = items.maxApplications.trim() ? whole(items.maxApplications) : undefined;
  if (items.maxApplications.trim() && max === undefined) return 'At most … times must be a whole number from 1.';
  const getCategories = listOf(items.getCategories);
  return {
    type: 'BUY_X_GET_Y',
    buy: { quantity: buy, target },
    get: { quantity: get, percentOff, ...(getCategories.length ? { target: { categories: getCategories } } : {}) },
    ...(max !== undefined ? { maxApplications: max } : {}),
  };
}

function targetText(t: Target | undefined): string {
  if (!t) return '';
  const parts = [t.categories && `categories ${t.categories.join(', ')}`, t.collections && `collections ${t.collections.join(', ')}`, t.productIds && `products ${t.productIds.join(', ')}`, t.skus && `SKUs ${t.skus.join(', ')}`];
  return parts.filter(Boolean).join('; ');
}

/** One line for a discount, e.g. "Buy 2 get 1 free (categories shirts)". */
export function discountSummary(d: Discount, currency?: string | null): string {
  const on = (t: Target | undefined) => (t ? ` on ${targetText(t)}` : '');
  switch (d.type) {
    case 'PERCENT':
      return `${d.percentOff}% off${on(d.target)}`;
    case 'AMOUNT':
      return `${money(d.amountOff, currency ?? undefined)} off${on(d.target)}`;
    case 'FREE_SHIPPING':
      return 'Free shipping';
    case 'BUY_X_GET_Y': {
      const percent = d.get.percentOff ?? 100;
      const given = percent === 100 ? 'free' : `${percent}% off`;
      return `Buy ${d.buy.quantity} get ${d.get.quantity} ${given} (${targetText(d.buy.target)}${d.get.target ? ` → ${targetText(d.get.target)}` : ''})${d.maxApplications ? `, at most ${d.maxApplications}×` : ''}`;
    }
    default:
      return d.type;
  }
}

/** The target fields (percent or amount off), and for buy X get Y its quantities, what is given and the cap. */
export function ItemFields({ id, kind, items, onChange }: { id: string; kind: DiscountKind; items: ItemsDraft; onChange: (items: ItemsDraft) => void }) {
  if (kind === 'free-shipping') return null;
  const field = (key: keyof ItemsDraft, label: string, placeholder: string) => (
    <>
      <label for={`${id}-${key}`}>{label}</label>
      <input id={`${id}-${key}`} placeholder={placeholder} value={items[key]} onInput={(e) => onChange({ ...items, [key]: e.currentTarget.value })} />
    </>
  );
  const bxgy = kind === 'buy-x-get-y';
  return (
    <>
      <span class="muted small form-note">{bxgy ? 'The items bought (every field given must match):' : 'Only these items (empty: the whole order):'}</span>
      {field('categories', 'Categories', 'e.g. shirts, shoes')}
      {field('collections', 'Collections', 'optional')}
      {field('productIds', 'Product ids', 'optional')}
      {field('skus', 'SKUs', 'optional')}
      {bxgy && (
        <>
          {field('buyQuantity', 'Buy quantity', '2')}
          {field('getQuantity', 'Get quantity', '1')}
          {field('getCategories', 'Get categories', 'empty: the items bought')}
          {field('getPercentOff', 'Percent off the units given', '100')}
          {field('maxApplications', 'At most … times', 'unlimited')}
        </>
      )}
    </>
  );
}
