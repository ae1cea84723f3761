// Order returns test helpers: a shop whose orders move every figure a return gives back (a discount voucher, a gift
// card, pay with points, an ORDER_PAID earning rule with a tier multiplier, a referral code), its orders redeemed as
// one stack and paid, the worker's reactions run in-process, and the state a return must restore read in one place.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { reactToNextEvent } from '../../src/domains/loyalty/index.js';
import { reactToNextReferralEvent } from '../../src/orchestration/index.js';
import type { Pool } from '../../src/platform/database.js';
import type { ApiClient } from '../support/api-client.js';

export interface Shop {
  discountCode: string;
  giftCode: string;
  programId: string;
  referralCode: string;
  referrerId: string;
  ruleId: string;
}

export interface ShopOptions {
  percentOff?: number;
  gift?: number;
  /** Every `every` paid earns `points`. */
  earning?: { every: number; points: number };
}

export async function drain(pool: Pool): Promise<void> {
  for (;;) {
    const loyalty = await reactToNextEvent(pool);
    const referral = await reactToNextReferralEvent(pool);
    if (!loyalty && !referral) return;
  }
}

export async function openShop(api: ApiClient, options: ShopOptions = {}): Promise<Shop> {
  const tag = randomUUID().slice(0, 8);
  const discount = await api.create('/api/v1/vouchers', { code: `TEN-${tag}`, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'PERCENT', percentOff: options.percentOff ?? 10 } });
  const gift = await api.create('/api/v1/vouchers', { code: `GIFT-${tag}`, type: 'GIFT_CARD', gift: { amount: options.gift ?? 2_000, currency: 'EUR' } });
  const program = await api.create('/api/v1/campaigns', {
    name: `Club ${tag}`,
    type: 'LOYALTY_PROGRAM',
    currency: 'EUR',
    loyalty: { payWithPoints: { pointValue: { points: 10, amount: 10 } } },
  });
  const earning = options.earning ?? { every: 100, points: 7 };
  const rule = await api.create(`/api/v1/loyalty/programs/${program.id}/earning-rules`, { name: 'paid', trigger: 'ORDER_PAID', points: { type: 'PER_AMOUNT', ...earning } });
  await api.create(`/api/v1/loyalty/programs/${program.id}/tiers`, { name: 'Silver', minPoints: 100, multiplier: 1.5 });
  await api.create(`/api/v1/loyalty/programs/${program.id}/tiers`, { name: 'Gold', minPoints: 1_000, multiplier: 2 });
  const mug = await api.create('/api/v1/rewards', { name: `Mug ${tag}`, type: 'MATERIAL' });
  const referral = await api.create('/api/v1/campaigns', {
    name: `Refer ${tag}`,
    type: 'REFERRAL_PROGRAM',
    currency: 'EUR',
    voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 300 } },
    referral: { confirmOn: 'REDEMPTION', refereeMustBeNew: false, referrerRewards: [{ rewardId: mug.id }] },
  });
  const referrer = await api.create('/api/v1/customers', { sourceId: `referrer-${tag}` });
  const code = await api.post(`/api/v1/referrals/programs/${referral.id}/codes`, { customer: { id: referrer.id } });
  expect([200, 201]).toContain(code.status);
  return { discountCode: discount.code, giftCode: gift.code, programId: program.id, referralCode: code.body.code, referrerId: referrer.id, ruleId: rule.id };
}

export interface PlacedOrder {
  orderId: string;
  customerId: string;
  memberId: string;
  memberCode: string;
  stack: any;
}

export interface OrderSpec {
  items: Array<{ sku: string; quantity: number; price: number }>;
  /** Points on the member's card before the order (some pay for it). */
  points: number;
  /** Gift credits wanted from the card (capped by its balance). */
  gift: number;
  /** Points money wanted. */
  pointsMoney: number;
  referral: boolean;
  /** An earlier paid order of the member, without vouchers: its points place the member in a tier. */
  priorOrder?: number;
}

/** A customer joins, gets points, orders, redeems one stack against the order, and pays; the worker reacts. */
export async function placeOrder(api: ApiClient, pool: Pool, shop: Shop, spec: OrderSpec): Promise<PlacedOrder> {
  const tag = randomUUID().slice(0, 8);
  const customer = await api.create('/api/v1/customers', { sourceId: `buyer-${tag}` });
  const member = await api.create(`/api/v1/loyalty/programs/${shop.programId}/members`, { customer: { id: customer.id } });
  if (spec.points > 0) expect((await api.post(`/api/v1/loyalty/members/${member.id}/points`, { points: spec.points })).status).toBe(200);
  if (spec.priorOrder) {
    await api.create('/api/v1/orders', { amount: spec.priorOrder, currency: 'EUR', customer: { id: customer.id }, status: 'PAID' });
    await drain(pool);
  }
  const amount = spec.items.reduce((s, i) => s + i.quantity * i.price, 0);
  const sourceId = `ord-${tag}`;
  const order = await api.create('/api/v1/orders', { sourceId, amount, currency: 'EUR', items: spec.items, customer: { id: customer.id } });
  const vouchers = [
    ...(spec.referral ? [{ code: shop.referralCode }] : []),
    { code: shop.discountCode },
    ...(spec.gift > 0 ? [{ code: shop.giftCode, amount: spec.gift }] : []),
    ...(spec.pointsMoney > 0 ? [{ code: member.code, amount: spec.pointsMoney }] : []),
  ];
  const stack = await api.post('/api/v1/redemptions/stack', {
    vouchers,
    order: { id: sourceId, amount, currency: 'EUR', items: spec.items },
    customer: { id: customer.id },
    idempotencyKey: randomUUID(),
  });
  expect(stack.body.ok, JSON.stringify(stack.body)).toBe(true);
  expect((await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' })).status).toBe(200);
  await drain(pool);
  return { orderId: order.id, customerId: customer.id, memberId: member.id, memberCode: member.code, stack: stack.body };
}

/** Every figure an order's returns give back, read from the database (ids of rows made by the returns left out). */
export async function figures(pool: Pool, placed: PlacedOrder, shop: Shop) {
  const order = (await pool.query('SELECT status, amount, returned_amount FROM orders WHERE id = $1', [placed.orderId])).rows[0];
  const redemptions = (
    await pool.query(
      `SELECT r.voucher_code, r.kind, r.amount, r.status, r.returned_amount, rb.reason
         FROM redemptions r LEFT JOIN redemption_rollbacks rb ON rb.redemption_id = r.id
        WHERE r.order_id = (SELECT source_id FROM orders WHERE id = $1) ORDER BY r.voucher_code`,
      [placed.orderId],
    )
  ).rows.map((r) => ({ ...r, voucher_code: r.voucher_code === placed.memberCode ? 'MEMBER' : r.voucher_code }));
  const vouchers = (
    await pool.query(
      `SELECT code, redeemed_count, gift_balance, points_balance, points_pending, points_lifetime, t.name AS tier
         FROM vouchers v LEFT JOIN loyalty_tiers t ON t.id = v.loyalty_tier_id WHERE v.code = ANY($1) ORDER BY code`,
      [[shop.discountCode, shop.giftCode, shop.referralCode, placed.memberCode]],
    )
  ).rows.map((v) => ({ ...v, code: v.code === placed.memberCode ? 'MEMBER' : v.code }));
  const giftLedger = (await pool.query(`SELECT coalesce(sum(e.amount), 0)::bigint AS sum FROM gift_ledger_entries e JOIN vouchers v ON v.id = e.voucher_id WHERE v.code = $1`, [shop.giftCode])).rows[0].sum;
  const conversions = (await pool.query('SELECT status FROM referral_conversions WHERE referee_customer_id = $1', [placed.customerId])).rows;
  // The customer's uses of each voucher it redeemed: its redemptions of it not rolled back (as the engine counts them).
  const uses = (
    await pool.query(
      `SELECT voucher_id, count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS uses FROM redemptions WHERE customer_id = $1 GROUP BY voucher_id ORDER BY voucher_id`,
      [placed.customerId],
    )
  ).rows;
  return { order, redemptions, vouchers, giftLedger: Number(giftLedger), conversions, uses };
}

/** Every gift card's ledger sums to its balance, and every entry's balance_after is its running sum. */
export async function giftLedgerMismatches(pool: Pool): Promise<unknown[]> {
  const { rows } = await pool.query(
    `SELECT v.code, v.gift_balance, coalesce(sum(e.amount), 0)::bigint AS ledger FROM vouchers v LEFT JOIN gift_ledger_entries e ON e.voucher_id = v.id
      WHERE v.type = 'GIFT_CARD' GROUP BY v.id HAVING v.gift_balance <> coalesce(sum(e.amount), 0)`,
  );
  return rows;
}
