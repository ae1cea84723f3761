// The arithmetic of an order's returns, pure: what a return gives back of each figure the order moved. Every figure is
// a function of what was returned so far in all (cumulative units per line, cumulative amount), rounded down, so the
// last return gives back exactly what is left and any split of an order into returns ends where one whole return does.

export interface ReturnLine {
  quantity: number;
  price: number;
  productId?: string | undefined;
  sku?: string | undefined;
}

export interface ReturnRedemption {
  id: string;
  kind: 'DISCOUNT' | 'GIFT' | 'POINTS';
  amount: number;
  /** Points a loyalty card paid (kind POINTS). */
  points: number | null;
  /** A discount's share of each order line, when it was applied to the order's items. */
  itemDiscounts: number[] | null;
  /** Discount returned so far. */
  returnedAmount: number;
  /** Gift credits (GIFT) or points (POINTS) given back so far. */
  returnedCredit: number;
}

export interface OrderReturnState {
  /** The order's amount before discounts. */
  amount: number;
  lines: ReturnLine[];
  returnedAmount: number;
  /** Units returned so far, per line. */
  returnedUnits: number[];
  /** The order's redemptions that still stand (SUCCEEDED). */
  redemptions: ReturnRedemption[];
}

export type ReturnAsk = { items: Array<{ index?: number | undefined; productId?: string | undefined; sku?: string | undefined; quantity: number }> } | { amount: number };

export interface ReturnPlan {
  /** The share of what the customer paid that comes back. */
  amount: number;
  /** The units of each line returned in all after this return. */
  units: number[];
  /** The items this return takes back, by line. */
  items: Array<{ index: number; productId?: string; sku?: string; quantity: number }>;
  /** Nothing is left of the order after it: its redemptions are rolled back. */
  whole: boolean;
  /** Per redemption: discount returned by this return, and credits (gift credits or points) given back. */
  reversals: Array<{ id: string; kind: ReturnRedemption['kind']; discount: number; credit: number }>;
}

export type ReturnDecision = { ok: true; plan: ReturnPlan } | { ok: false; problem: 'return_exceeds_order' | 'invalid_request'; detail: string; field?: string };

/** floor(x × part / whole) in exact integer arithmetic (x, part, whole ≤ 2^53-1). */
export function shareOf(x: number, part: number, whole: number): number {
  if (whole <= 0) return 0;
  return Number((BigInt(x) * BigInt(part)) / BigInt(whole));
}

/** What the customer paid for the order: its amount less its discounts (gift credits and points are payment). */
export function paidOf(state: Pick<OrderReturnState, 'amount' | 'redemptions'>): number {
  const discount = state.redemptions.reduce((sum, r) => sum + (r.kind === 'DISCOUNT' ? r.amount : 0), 0);
  return Math.max(0, state.amount - discount);
}

/** What the order paid in money (its amount less every redemption): what its points were earned on. */
export function moneyPaidOf(state: Pick<OrderReturnState, 'amount' | 'redemptions'>): number {
  return Math.max(0, state.amount - Math.min(state.amount, state.redemptions.reduce((sum, r) => sum + r.amount, 0)));
}

/** A line's value for `units` of it: its share of the line total less the discounts' shares on those units. */
function lineValue(state: OrderReturnState, line: number, units: number): number {
  const l = state.lines[line]!;
  let value = shareOf(l.price * l.quantity, units, l.quantity);
  for (const r of state.redemptions) if (r.kind === 'DISCOUNT' && r.itemDiscounts) value -= shareOf(r.itemDiscounts[line] ?? 0, units, l.quantity);
  return value;
}

/** The line an item of a return names: by position, else the first line with that product or sku. */
function lineOf(state: OrderReturnState, item: { index?: number | undefined; productId?: string | undefined; sku?: string | undefined }): number {
  if (item.index !== undefined) return item.index < state.lines.length ? item.index : -1;
  return state.lines.findIndex((l) => (item.productId === undefined || l.productId === item.productId) && (item.sku === undefined || l.sku === item.sku));
}

export function planReturn(state: OrderReturnState, ask: ReturnAsk): ReturnDecision {
  const paid = paidOf(state);
  const before = state.returnedAmount;
  const units = state.lines.map((_, i) => state.returnedUnits[i] ?? 0);
  const items: ReturnPlan['items'] = [];
  let amount: number;
  let whole: boolean;
  if ('items' in ask) {
    for (const [n, item] of ask.items.entries()) {
      const line = lineOf(state, item);
      if (line < 0) return { ok: false, problem: 'invalid_request', detail: 'no such item in the order', field: `body.items.${n}` };
      const l = state.lines[line]!;
      if (units[line]! + item.quantity > l.quantity) {
        return { ok: false, problem: 'return_exceeds_order', detail: `item ${line} has ${l.quantity - units[line]!} of ${l.quantity} units left to return` };
      }
      units[line]! += item.quantity;
      items.push({ index: line, ...(l.productId !== undefined ? { productId: l.productId } : {}), ...(l.sku !== undefined ? { sku: l.sku } : {}), quantity: item.quantity });
    }
    if (before >= paid && paid > 0) return { ok: false, problem: 'return_exceeds_order', detail: 'the order was returned whole already' };
    amount = state.lines.reduce((sum, _, i) => sum + lineValue(state, i, units[i]!) - lineValue(state, i, state.returnedUnits[i] ?? 0), 0);
    whole = units.every((u, i) => u === state.lines[i]!.quantity) || before + amount >= paid;
    if (whole) amount = paid - before;
  } else {
    if (before + ask.amount > paid) {
      return { ok: false, problem: 'return_exceeds_order', detail: `${Math.max(0, paid - before)} of the ${paid} paid is left to return` };
    }
    amount = ask.amount;
    whole = before + amount === paid;
  }
  const after = before + amount;
  const reversals = state.redemptions.map((r) => {
    let discount = 0;
    let credit = 0;
    if (r.kind === 'DISCOUNT') {
      const target =
        whole ? r.amount
        : 'items' in ask && r.itemDiscounts ? state.lines.reduce((sum, l, i) => sum + shareOf(r.itemDiscounts![i] ?? 0, units[i]!, l.quantity), 0)
        : shareOf(r.amount, after, paid);
      discount = Math.max(0, Math.min(r.amount, target) - r.returnedAmount);
    } else {
      const total = r.kind === 'GIFT' ? r.amount : (r.points ?? 0);
      credit = Math.max(0, (whole ? total : shareOf(total, after, paid)) - r.returnedCredit);
    }
    return { id: r.id, kind: r.kind, discount, credit };
  });
  return { ok: true, plan: { amount, units, items, whole, reversals } };
}
