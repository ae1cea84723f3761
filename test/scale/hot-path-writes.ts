// The redemption hot path of one workspace, through the real service: a budgeted campaign's voucher validated with a
// session, redeemed by a new customer and rolled back; a gift card redeemed; a stack of both kinds. What each wrote.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { ApiClient } from '../support/api-client.js';

export interface HotPathRun {
  voucherIds: string[];
  campaignId: string;
  giftCardId: string;
  redemptionIds: string[];
  rolledBackId: string;
  idempotencyKeys: string[];
  customerSourceId: string;
}

const order = (amount: number, id?: string) => ({ amount, currency: 'EUR', ...(id ? { id } : {}) });

export async function runHotPath(api: ApiClient): Promise<HotPathRun> {
  const tag = randomUUID().slice(0, 8);
  const campaign = await api.create('/api/v1/campaigns', {
    name: `budgeted ${tag}`, type: 'DISCOUNT_COUPONS', budget: { total: { redemptions: 100 } },
  });
  const discount = await api.create('/api/v1/vouchers', {
    code: `D-${tag}`, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 500 }, campaignId: campaign.id,
    redemptionLimit: 10, perCustomerLimit: 3,
  });
  const second = await api.create('/api/v1/vouchers', { code: `S-${tag}`, type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } });
  const gift = await api.create('/api/v1/vouchers', { code: `G-${tag}`, type: 'GIFT_CARD', gift: { amount: 10_000, currency: 'EUR' } });
  const keys = [`redeem-${randomUUID()}`, `gift-${randomUUID()}`, `stack-${randomUUID()}`];
  const customerSourceId = `shopper-${tag}`;

  // A live reservation (voucher_sessions), left to expire.
  const validated = await api.post(`/api/v1/vouchers/${discount.code}/validate`, { order: order(4000), customer: { sourceId: customerSourceId }, session: { key: `cart-${tag}` } });
  expect(validated.body, JSON.stringify(validated.body)).toMatchObject({ valid: true, session: { key: `cart-${tag}` } });

  const redeemed = await api.post(`/api/v1/vouchers/${discount.code}/redemption`,
    { order: order(4000, `order-${tag}`), customer: { sourceId: customerSourceId } }, { 'idempotency-key': keys[0]! });
  expect(redeemed.body, JSON.stringify(redeemed.body)).toMatchObject({ ok: true });
  const rolledBackId = redeemed.body.redemption.id as string;
  const rolled = await api.post(`/api/v1/redemptions/${rolledBackId}/rollback`, { reason: 'returned' });
  expect(rolled.body, JSON.stringify(rolled.body)).toMatchObject({ ok: true });

  const giftRedeemed = await api.post(`/api/v1/vouchers/${gift.code}/redemption`, { order: order(300) }, { 'idempotency-key': keys[1]! });
  expect(giftRedeemed.body, JSON.stringify(giftRedeemed.body)).toMatchObject({ ok: true });

  const stacked = await api.post('/api/v1/redemptions/stack', {
    vouchers: [{ code: second.code }, { code: discount.code }, { code: gift.code }], order: order(10_000),
    customer: { sourceId: customerSourceId }, idempotencyKey: keys[2],
  });
  expect(stacked.body, JSON.stringify(stacked.body)).toMatchObject({ ok: true });
  const stackIds = (stacked.body.results as Array<{ redemptionId: string }>).map((r) => r.redemptionId);
  expect(stackIds).toHaveLength(3);

  return {
    voucherIds: [discount.id, second.id, gift.id],
    campaignId: campaign.id,
    giftCardId: gift.id,
    redemptionIds: [rolledBackId, giftRedeemed.body.redemption.id, ...stackIds],
    rolledBackId,
    idempotencyKeys: keys,
    customerSourceId,
  };
}
