// The best deal over real HTTP and PostgreSQL: POST /qualifications with bestDeal weighs the tiers, the customer's own
// vouchers and the codes named (gift cards left out: they pay, they do not discount) under the stacking rules, and
// redeeming its stack as a stack gives exactly its totals. Generated workspaces: every allowed combination of the
// offers, previewed through POST /redemptions/stack/validate, never beats it.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

const code = (prefix: string) => `${prefix}-${randomUUID().slice(0, 10)}`;
type Offer = { kind: string; code?: string; tierId?: string; priority: number; exclusive: boolean; discount: { type: string; amount: number } };
const entryOf = (o: { code?: string; tierId?: string }) => (o.tierId !== undefined ? { tierId: o.tierId } : { code: o.code! });

async function redeemed(api: ApiClient, vouchers: unknown[], order: unknown, customer: unknown) {
  const res = await api.post('/api/v1/redemptions/stack', { vouchers, order, customer, idempotencyKey: randomUUID() });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('the best deal of a qualification', () => {
  it('stacks what gives most under the rules, and redeeming that stack gives exactly its totals', async () => {
    const { api } = await service.newWorkspace();
    const customer = await api.create<{ id: string }>('/api/v1/customers', { sourceId: code('c') });
    const promo = await api.create<{ id: string }>('/api/v1/campaigns', { name: 'auto', type: 'PROMOTION' });
    // Alone the exclusive 30% gives most (3,000), but 20% then 8 off then 5 off (2,000 + 800 + 500) give more together.
    const exclusive = await api.create<{ id: string }>(`/api/v1/campaigns/${promo.id}/tiers`, { name: '30% alone', discount: { type: 'PERCENT', percentOff: 30 }, exclusive: true });
    const twenty = await api.create<{ id: string }>(`/api/v1/campaigns/${promo.id}/tiers`, { name: '20%', discount: { type: 'PERCENT', percentOff: 20 } });
    const mine = code('M');
    await api.create('/api/v1/vouchers', { code: mine, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 800 }, currency: 'EUR', customerId: customer.id });
    const typed = code('T');
    await api.create('/api/v1/vouchers', { code: typed, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, currency: 'EUR' });
    const gift = code('G');
    await api.create('/api/v1/vouchers', { code: gift, type: 'GIFT_CARD', gift: { amount: 9_000, currency: 'EUR' }, customerId: customer.id });
    const order = { amount: 10_000, currency: 'EUR', items: [{ productId: 'shoes', quantity: 2, price: 5_000 }] };

    const res = await api.post('/api/v1/qualifications', { order, customer: { id: customer.id }, codes: [typed], bestDeal: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.map((o: Offer) => o.tierId ?? o.code).sort()).toEqual([exclusive.id, twenty.id, mine, typed, gift].sort());
    expect(res.body.bestDeal).toEqual({
      vouchers: [{ tierId: twenty.id }, { code: mine }, { code: typed }],
      order: { amount: 10_000, discountAmount: 3_300, giftAmount: 0, totalAmount: 6_700, currency: 'EUR', items: [{ index: 0, productId: 'shoes', amount: 10_000, discountAmount: 3_300 }] },
      exact: true,
    });
    // Without bestDeal the answer is as before.
    const plain = await api.post('/api/v1/qualifications', { order, customer: { id: customer.id } });
    expect(plain.body.bestDeal).toBeUndefined();

    const stack = await redeemed(api, res.body.bestDeal.vouchers, order, { id: customer.id });
    expect(stack.ok).toBe(true);
    expect(stack.order).toEqual(res.body.bestDeal.order);

    // With a stack limit of 1 the exclusive tier alone is best.
    expect((await api.patch('/api/v1/workspace', { stackLimit: 1 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 5_100)); // the stack limit is read at most every 5 s
    const one = await api.post('/api/v1/qualifications', { order, customer: { id: customer.id }, codes: [typed], bestDeal: true });
    expect(one.body.bestDeal).toMatchObject({ vouchers: [{ tierId: exclusive.id }], order: { discountAmount: 3_000 }, exact: true });
    const alone = await redeemed(api, one.body.bestDeal.vouchers, order, { id: customer.id });
    expect(alone.order).toEqual(one.body.bestDeal.order);
  });

  it('is never beaten by an allowed combination, and redeeming it gives its totals (generated workspaces)', async () => {
    const discountArb = fc.oneof(
      fc.record({ type: fc.constant('PERCENT'), percentOff: fc.integer({ min: 1, max: 50 }) }),
      fc.record({ type: fc.constant('AMOUNT'), amountOff: fc.integer({ min: 1, max: 3_000 }) }),
      fc.record({ type: fc.constant('FIXED'), fixedAmount: fc.integer({ min: 1_000, max: 9_000 }) }),
    );
    const offerArb = fc.record({
      tier: fc.boolean(),
      discount: discountArb,
      priority: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
      exclusive: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
      maxDiscount: fc.option(fc.integer({ min: 100, max: 2_000 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(offerArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 2_000, max: 20_000 }), fc.integer({ min: 1, max: 5 }), async (offers, amount, stackLimit) => {
        const { api } = await service.newWorkspace();
        expect((await api.patch('/api/v1/workspace', { stackLimit })).status).toBe(200);
        const customer = await api.create<{ id: string }>('/api/v1/customers', { sourceId: code('c') });
        const promo = await api.create<{ id: string }>('/api/v1/campaigns', { name: 'auto', type: 'PROMOTION' });
        // Each offer's own priority (the campaign's, 0, when it has none) and exclusivity, by tier id or code.
        const priorityOf = new Map<string, number>();
        const exclusiveOf = new Map<string, boolean>();
        for (const o of offers) {
          const { discount, priority, exclusive, maxDiscount } = o;
          if (o.tier) {
            const tier = await api.create<{ id: string }>(`/api/v1/campaigns/${promo.id}/tiers`, { name: code('t'), discount, priority, exclusive, maxDiscount });
            priorityOf.set(tier.id, priority ?? 0);
            exclusiveOf.set(tier.id, exclusive);
          } else {
            const voucher = await api.create<{ code: string }>('/api/v1/vouchers', { code: code('V'), type: 'DISCOUNT', discount, priority, exclusive, maxDiscount, currency: 'EUR', customerId: customer.id });
            priorityOf.set(voucher.code, priority ?? 0);
            exclusiveOf.set(voucher.code, exclusive);
          }
        }
        const order = { amount, currency: 'EUR', items: [{ productId: 'p', quantity: 1, price: amount }] };
        const res = await api.post('/api/v1/qualifications', { order, customer: { id: customer.id }, bestDeal: true });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const best = res.body.bestDeal;
        expect(best.exact).toBe(true);
        expect(best.vouchers.length).toBeLessThanOrEqual(stackLimit);
        // Every combination within the limit, in the canonical order (priority, FIXED, PERCENT, the rest, larger first).
        const rank = (o: Offer) => ({ FIXED: 0, PERCENT: 1 })[o.discount.type] ?? 2;
        const data = (res.body.data as Offer[]).map((o, i) => ({ o, i }));
        const priority = (o: Offer) => priorityOf.get(o.tierId ?? o.code!)!;
        // The offers say how they stack, tiers and vouchers alike.
        for (const o of res.body.data as Offer[]) expect({ priority: o.priority, exclusive: o.exclusive }).toEqual({ priority: priority(o), exclusive: exclusiveOf.get(o.tierId ?? o.code!) });
        const ordered = data.sort((a, b) => priority(b.o) - priority(a.o) || rank(a.o) - rank(b.o) || b.o.discount.amount - a.o.discount.amount || a.i - b.i).map((x) => x.o);
        for (let mask = 1; mask < 1 << ordered.length; mask++) {
          const set = ordered.filter((_, i) => mask & (1 << i));
          if (set.length > stackLimit) continue;
          const preview = await api.post('/api/v1/redemptions/stack/validate', { vouchers: set.map(entryOf), order, customer: { id: customer.id } });
          if (preview.body.ok) expect(preview.body.order.discountAmount).toBeLessThanOrEqual(best.order.discountAmount);
        }
        if (best.vouchers.length) {
          const stack = await redeemed(api, best.vouchers, order, { id: customer.id });
          expect(stack.order).toEqual(best.order);
        } else expect(best.order.discountAmount).toBe(0);
      }),
      {
        numRuns: 12,
        // Found by a run of 2026-11-27: the data gave a voucher offer's priority as 0 (not the voucher's 2), which put
        // the percent tier before the capped FIXED voucher here, an order that gives more (120 against 119).
        examples: [[[{ tier: false, discount: { type: 'FIXED', fixedAmount: 1000 }, priority: 2, exclusive: false, maxDiscount: 100 }, { tier: true, discount: { type: 'PERCENT', percentOff: 1 }, priority: 2, exclusive: false, maxDiscount: undefined }, { tier: false, discount: { type: 'AMOUNT', amountOff: 1 }, priority: undefined, exclusive: true, maxDiscount: undefined }], 2000, 2]],
      },
    );
  }, 180_000);
});
