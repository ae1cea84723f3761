// Property: any split of an order into partial returns ends in exactly the state one whole return reaches, which is
// the state before the order (uses, the gift card's balance and ledger, points, lifetimeEarned, tier, the referral
// conversion reverted), and after every return each ledger equals its balance. Random orders: 1-3 items, a percent
// discount, a referral code, a gift card, pay with points, an ORDER_PAID rule earned at a tier multiplier (an earlier
// order places the member in Silver; this one may lift it to Gold, and its return drop it back).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { ledgerMismatches } from '../loyalty/support.js';
import type { ApiClient } from '../support/api-client.js';
import { drain, figures, giftLedgerMismatches, openShop, placeOrder, type Shop } from './returns-support.js';

let service: TestService;
let api: ApiClient;
let shop: Shop;
beforeAll(async () => {
  service = await startTestService();
  api = (await service.newWorkspace()).api;
  shop = await openShop(api, { gift: 10_000_000, earning: { every: 100, points: 20 } });
});
afterAll(async () => service?.close());

const line = fc.record({ quantity: fc.integer({ min: 1, max: 4 }), price: fc.integer({ min: 1, max: 5_000 }) });
const step = fc.record({ byAmount: fc.boolean(), line: fc.nat(), units: fc.integer({ min: 1, max: 4 }), fraction: fc.integer({ min: 1, max: 60 }) });
const orderSpec = fc.record({
  lines: fc.array(line, { minLength: 1, maxLength: 3 }),
  giftShare: fc.integer({ min: 0, max: 40 }),
  pointsShare: fc.integer({ min: 0, max: 40 }),
  referral: fc.boolean(),
  steps: fc.array(step, { minLength: 1, maxLength: 3 }),
});

async function checkLedgers(): Promise<void> {
  expect(await giftLedgerMismatches(service.pool)).toEqual([]);
  expect(await ledgerMismatches(service.pool)).toEqual([]);
}

describe('order returns: any split ends where one whole return does', () => {
  it('random orders, random splits', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(orderSpec, async (spec) => {
        const items = spec.lines.map((l, i) => ({ sku: `sku-${i}`, ...l }));
        const amount = items.reduce((s, i) => s + i.quantity * i.price, 0);
        const giftBefore = (await service.pool.query('SELECT gift_balance FROM vouchers WHERE code = $1', [shop.giftCode])).rows[0].gift_balance;
        const placed = await placeOrder(api, service.pool, shop, {
          items,
          points: 100_000,
          gift: Math.floor((amount * spec.giftShare) / 100),
          pointsMoney: Math.floor((amount * spec.pointsShare) / 100),
          referral: spec.referral,
          priorOrder: 600,
        });
        const before = await figures(service.pool, placed, shop);
        const member = () => figures(service.pool, placed, shop).then((f) => f.vouchers.find((v: any) => v.code === 'MEMBER'));
        const left = items.map((i) => i.quantity);
        for (const s of spec.steps) {
          const f = await figures(service.pool, placed, shop);
          if (f.order.status === 'RETURNED') break;
          const paid = amount - placed.stack.order.discountAmount;
          const body = s.byAmount
            ? { amount: Math.max(1, Math.floor(((paid - f.order.returned_amount) * s.fraction) / 100)) }
            : (() => {
                const i = s.line % items.length;
                const quantity = Math.min(left[i]!, s.units);
                return quantity > 0 ? { items: [{ index: i, quantity }] } : undefined;
              })();
          if (!body) continue;
          const res = await api.post(`/api/v1/orders/${placed.orderId}/returns`, body);
          if (res.status === 409) continue;
          expect(res.status, JSON.stringify(res.body)).toBe(201);
          if ('items' in body) left[body.items![0]!.index] = left[body.items![0]!.index]! - body.items![0]!.quantity;
          await checkLedgers();
        }
        const f = await figures(service.pool, placed, shop);
        if (f.order.status !== 'RETURNED') {
          const last = await api.post(`/api/v1/orders/${placed.orderId}/returns`, left.some((n) => n > 0) ? { items: left.flatMap((n, index) => (n > 0 ? [{ index, quantity: n }] : [])) } : { amount: amount - placed.stack.order.discountAmount - f.order.returned_amount });
          expect(last.status, JSON.stringify(last.body)).toBe(201);
          expect(last.body.status).toBe('RETURNED');
        }
        await drain(service.pool);
        await checkLedgers();
        const after = await figures(service.pool, placed, shop);
        // What one whole return leaves: everything as before the order, its redemptions rolled back for a return.
        expect(after.order).toMatchObject({ status: 'RETURNED', returned_amount: amount - placed.stack.order.discountAmount });
        expect(after.redemptions.map((r: any) => [r.status, r.reason])).toEqual(before.redemptions.map(() => ['ROLLED_BACK', 'RETURN']));
        expect(after.redemptions.map((r: any) => r.returned_amount)).toEqual(before.redemptions.map((r: any) => (r.kind === 'DISCOUNT' ? r.amount : 0)));
        expect((await service.pool.query('SELECT gift_balance FROM vouchers WHERE code = $1', [shop.giftCode])).rows[0].gift_balance).toBe(giftBefore);
        expect(await member()).toMatchObject({ points_balance: 100_000 + 120 - 0, points_pending: 0, points_lifetime: 120, tier: 'Silver' });
        expect(after.uses.every((u: any) => u.uses === 0)).toBe(true);
        expect(after.conversions.map((c: any) => c.status)).toEqual(spec.referral ? ['REVERTED'] : []);
      }),
      { numRuns: 6 },
    );
  });
});
