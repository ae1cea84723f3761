// The discount a campaign template or a promotion tier gives, as the text fields of a form: a draft made from the
// API's Discount (every type, every field, so an edit keeps what it does not change), back to a Discount, and one line.
import type { InputOf } from '../../../src/client/operation-types.js';
import { money } from '../components.js';

export type Discount = InputOf<'promotions.createTier'>['discount'];
type Target = NonNullable<Extract<Discount, { type: 'PERCENT' }>['target']>;
export type DiscountKind = 'percent' | 'amount' | 'fixed' | 'unit' | 'free-shipping' | 'buy-x-get-y';

export const DISCOUNT_CHOICES: readonly { value: DiscountKind; label: string }[] = [
  { value: 'percent', label: 'Percent off' },
  { value: 'amount', label: 'Amount off' },
  { value: 'fixed', label: 'Fixed total' },
  { value: 'unit', label: 'Free units' },
  { value: 'free-shipping', label: 'Free shipping' },
  { value: 'buy-x-get-y', label: 'Buy X get Y' },
];

export interface TargetDraft {
  categories: string;
  collections: string;
  productIds: string;
  skus: string;
  /** A JSON object, e.g. {"brand": "acme"}. */
  metadata: string;
}

export interface DiscountDraft {
  /** Percent off, amount off, the fixed total or the units given, by kind. */
  value: string;
  amountLimit: string;
  unitProductId: string;
  unitSku: string;
  /** The items discounted; for buy X get Y, the items bought. */
  target: TargetDraft;
  buyQuantity: string;
  getQuantity: string;
  getPercentOff: string;
  getTarget: TargetDraft;
  maxApplications: string;
}

/** "12.50" → 1250 minor units; undefined when it is not an amount with at most two decimals. */
export function minorUnits(text: string): number | undefined {
  const match = /^(\d{1,13})(?:[.,](\d{1,2}))?$/.exec(text.trim());
  return match ? Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0')) : undefined;
}

const majorUnits = (minor: number | undefined) => (minor === undefined ? '' : money(minor));
const listOf = (text: string) => text.split(',').map((s) => s.trim()).filter(Boolean);
const textOf = (list: readonly string[] | undefined) => (list ?? []).join(', ');
const optional = (n: number | undefined) => (n === undefined ? '' : String(n));

export function kindOf(d: Discount | null | undefined): DiscountKind | undefined {
  return d ? ({ PERCENT: 'percent', AMOUNT: 'amount', FIXED: 'fixed', UNIT: 'unit', FREE_SHIPPING: 'free-shipping', BUY_X_GET_Y: 'buy-x-get-y' } as const)[d.type] : undefined;
}

function targetDraftOf(t: Target | undefined): TargetDraft {
  return {
    categories: textOf(t?.categories),
    collections: textOf(t?.collections),
    productIds: textOf(t?.productIds),
    skus: textOf(t?.skus),
    metadata: t?.metadata ? JSON.stringify(t.metadata) : '',
  };
}

function valueOf(d: Discount | null | undefined): string {
  switch (d?.type) {
    case 'PERCENT':
      return String(d.percentOff);
    case 'AMOUNT':
      return majorUnits(d.amountOff);
    case 'FIXED':
      return majorUnits(d.fixedAmount);
    case 'UNIT':
      return String(d.unitOff);
    default:
      return '';
  }
}

/** The fields prefilled with `d` (empty ones, with buy 2 get 1 free, without). */
export function discountDraftOf(d: Discount | null | undefined): DiscountDraft {
  const bxgy = d?.type === 'BUY_X_GET_Y' ? d : undefined;
  return {
    value: valueOf(d),
    amountLimit: d?.type === 'PERCENT' ? majorUnits(d.amountLimit) : '',
    unitProductId: d?.type === 'UNIT' ? (d.productId ?? '') : '',
    unitSku: d?.type === 'UNIT' ? (d.sku ?? '') : '',
    target: targetDraftOf(bxgy ? bxgy.buy.target : d && 'target' in d ? d.target : undefined),
    buyQuantity: String(bxgy?.buy.quantity ?? 2),
    getQuantity: String(bxgy?.get.quantity ?? 1),
    getPercentOff: String(bxgy?.get.percentOff ?? 100),
    getTarget: targetDraftOf(bxgy?.get.target),
    maxApplications: optional(bxgy?.maxApplications),
  };
}

/** The Target the fields name (undefined: none given), or what is wrong with them. */
function targetFrom(d: TargetDraft): Target | undefined | string {
  let metadata: unknown;
  if (d.metadata.trim()) {
    try {
      metadata = JSON.parse(d.metadata);
    } catch {
      metadata = undefined;
    }
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return 'Metadata must be a JSON object, e.g. {"brand": "acme"}.';
  }
  const fields = { categories: listOf(d.categories), collections: listOf(d.collections), productIds: listOf(d.productIds), skus: listOf(d.skus) };
  const target: Record<string, unknown> = Object.fromEntries(Object.entries(fields).filter(([, v]) => v.length));
  if (metadata !== undefined) target.metadata = metadata;
  return Object.keys(target).length ? (target as Target) : undefined;
}

const whole = (text: string) => (/^\d{1,7}$/.test(text.trim()) && Number(text) >= 1 ? Number(text) : undefined);
const percent = (text: string) => (/^\d+(\.\d+)?$/.test(text.trim()) && Number(text) > 0 && Number(text) <= 100 ? Number(text) : undefined);
const AMOUNT_FORMAT = 'needs digits with at most two decimals, e.g. 12.50.';

/** The Discount the fields describe, or what is wrong with them (the API checks the rest and answers a problem). */
export function discountFrom(kind: DiscountKind, draft: DiscountDraft): Discount | string {
  if (kind === 'free-shipping') return { type: 'FREE_SHIPPING' };
  const target = targetFrom(draft.target);
  if (typeof target === 'string') return target;
  const on = target ? { target } : {};
  switch (kind) {
    case 'percent': {
      const percentOff = percent(draft.value);
      if (percentOff === undefined) return 'Percent off must be more than 0 and at most 100.';
      const limit = draft.amountLimit.trim() ? minorUnits(draft.amountLimit) : undefined;
      if (draft.amountLimit.trim() && limit === undefined) return `At most off ${AMOUNT_FORMAT}`;
      return { type: 'PERCENT', percentOff, ...(limit !== undefined ? { amountLimit: limit } : {}), ...on };
    }
    case 'amount': {
      const amountOff = minorUnits(draft.value);
      return amountOff === undefined ? `The amount ${AMOUNT_FORMAT}` : { type: 'AMOUNT', amountOff, ...on };
    }
    case 'fixed': {
      const fixedAmount = minorUnits(draft.value);
      return fixedAmount === undefined ? `The fixed total ${AMOUNT_FORMAT}` : { type: 'FIXED', fixedAmount, ...on };
    }
    case 'unit': {
      const unitOff = whole(draft.value);
      if (unitOff === undefined) return 'Units given must be a whole number from 1.';
      const productId = draft.unitProductId.trim();
      const sku = draft.unitSku.trim();
      if (!productId && !sku) return 'Free units need the product id or the SKU of the unit given.';
      return { type: 'UNIT', unitOff, ...(productId ? { productId } : {}), ...(sku ? { sku } : {}), ...on };
    }
  }
  return buyXGetYFrom(draft, target);
}

function buyXGetYFrom(draft: DiscountDraft, target: Target | undefined): Discount | string {
  if (!target) return 'Buy X get Y needs the items bought: a category, collection, product, SKU or metadata.';
  const buy = whole(draft.buyQuantity);
  const get = whole(draft.getQuantity);
  if (buy === undefined || get === undefined) return 'Buy and get quantities must be whole numbers from 1.';
  const percentOff = percent(draft.getPercentOff.trim() || '100');
  if (percentOff === undefined) return 'Percent off the units given must be more than 0 and at most 100.';
  const max = draft.maxApplications.trim() ? whole(draft.maxApplications) : undefined;
  if (draft.maxApplications.trim() && max === undefined) return 'At most … times must be a whole number from 1.';
  const getTarget = targetFrom(draft.getTarget);
  if (typeof getTarget === 'string') return `Items given: ${getTarget}`;
  return {
    type: 'BUY_X_GET_Y',
    buy: { quantity: buy, target },
    get: { quantity: get, percentOff, ...(getTarget ? { target: getTarget } : {}) },
    ...(max !== undefined ? { maxApplications: max } : {}),
  };
}

function targetText(t: Target | undefined): string {
  if (!t) return '';
  const metadata = t.metadata && Object.entries(t.metadata).map(([k, v]) => `${k} = ${JSON.stringify(v)}`);
  const parts = [
    t.categories && `categories ${t.categories.join(', ')}`,
    t.collections && `collections ${t.collections.join(', ')}`,
    t.productIds && `products ${t.productIds.join(', ')}`,
    t.skus && `SKUs ${t.skus.join(', ')}`,
    metadata && `metadata ${metadata.join(', ')}`,
  ];
  return parts.filter(Boolean).join('; ');
}

/** One line for a discount, e.g. "Buy 2 get 1 free (categories shirts)". */
export function discountSummary(d: Discount, currency?: string | null): string {
  const on = (t: Target | undefined) => (t ? ` on ${targetText(t)}` : '');
  const cash = (minor: number) => money(minor, currency ?? undefined);
  switch (d.type) {
    case 'PERCENT':
      return `${d.percentOff}% off${on(d.target)}${d.amountLimit !== undefined ? ` (at most ${cash(d.amountLimit)})` : ''}`;
    case 'AMOUNT':
      return `${cash(d.amountOff)} off${on(d.target)}`;
    case 'FIXED':
      return d.target ? `Total of ${targetText(d.target)} becomes ${cash(d.fixedAmount)}` : `Order total becomes ${cash(d.fixedAmount)}`;
    case 'UNIT':
      return `${d.unitOff} × ${d.productId ?? d.sku ?? 'unit'} free${on(d.target)}`;
    case 'FREE_SHIPPING':
      return 'Free shipping';
    case 'BUY_X_GET_Y': {
      const percentOff = d.get.percentOff ?? 100;
      const given = percentOff === 100 ? 'free' : `${percentOff}% off`;
      return `Buy ${d.buy.quantity} get ${d.get.quantity} ${given} (${targetText(d.buy.target)}${d.get.target ? ` → ${targetText(d.get.target)}` : ''})${d.maxApplications ? `, at most ${d.maxApplications}×` : ''}`;
    }
    default:
      return (d as { type: string }).type;
  }
}
