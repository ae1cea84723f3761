// The stack preview over real HTTP and PostgreSQL: POST /redemptions/stack/validate answers what the stack redeemed
// right after on the same state answers (ok, code, explanations, per-voucher results, order totals), and commits and
// reserves nothing. Generated stacks of discount vouchers (every type, priorities, exclusive ones, caps, small
// redemption limits that run out as the runs go on), gift cards, promotion tiers, a campaign with a budget, unknown
// codes and duplicates; two partition threads, so stacks go both the one-thread way and the way across partitions.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let api: ApiClient;
let budgetCampaign: string;
let promotion: string;
beforeAll(async () => {
  service = await startTestService({ partitions: 2 });
  ({ api } = await service.newWorkspace());
  budgetCampaign = (await api.create<{ id: string }>('/api/v1/campaigns', {
    name: 'budgeted', type: 'DISCOUNT_COUPONS', currency: 'EUR', budget: { total: { redemptions: 6, discountAmount: 4_000 } },
    voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 } },
  })).id;
  promotion = (await api.create<{ id: string }>('/api/v1/campaigns', { name: 'auto', type: 'PROMOTION' })).id;
});
afterAll(async () => service?.close());

const products = ['shoes', 'socks'];
const discountArb = fc.oneof(
  fc.record({ type: fc.constant('PERCENT'), percentOff: fc.integer({ min: 1, max: 60 }) }),
  fc.record({ type: fc.constant('AMOUNT'), amountOff: fc.integer({ min: 1, max: 4_000 }) }),
  fc.record({ type: fc.constant('FIXED'), fixedAmount: fc.integer({ min: 0, max: 12_000 }) }),
  fc.record({ type: fc.constant('UNIT'), unitOff: fc.integer({ min: 1, max: 2 }), productId: fc.constantFrom(...products) }),
);
const voucherArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('discount' as const), discount: discountArb, priority: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }), exclusive: fc.integer({ min: 0, max: 9 }).map((n) => n === 0), maxDiscount: fc.option(fc.integer({ min: 0, max: 3_000 }), { nil: undefined }), redemptionLimit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }), inBudget: fc.integer({ min: 0, max: 3 }).map((n) => n === 0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('gift' as const), amount: fc.integer({ min: 1, max: 6_000 }), take: fc.option(fc.integer({ min: 1, max: 3_000 }), { nil: undefined }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tier' as const), discount: discountArb, priority: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }), redemptionLimit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'unknown' as const }) },
);
const orderArb = fc
  .array(fc.record({ productId: fc.constantFrom(...products), quantity: fc.integer({ min: 1, max: 3 }), price: fc.integer({ min: 100, max: 6_000 }) }), { minLength: 1, maxLength: 3 })
  .map((items) => ({ amount: items.reduce((sum, i) => sum + i.price * i.quantity, 0), currency: 'EUR', items }));

type Spec = typeof voucherArb extends fc.Arbitrary<infer T> ? T : never;

/** Creates what a generated entry names, and answers the stack entry for it. */
async function entryFor(spec: Spec): Promise<Record<string, unknown>> {
  const code = `P-${randomUUID().slice(0, 10)}`;
  switch (spec.kind) {
    case 'unknown':
      return { code };
    case 'gift':
      await api.create('/api/v1/vouchers', { code, type: 'GIFT_CARD', gift: { amount: spec.amount, currency: 'EUR' } });
      return { code, ...(spec.take !== undefined ? { amount: spec.take } : {}) };
    case 'tier': {
      const { discount, priority, redemptionLimit } = spec;
      const tier = await api.create<{ id: string }>(`/api/v1/campaigns/${promotion}/tiers`, { name: code, discount, priority, redemptionLimit });
      return { tierId: tier.id };
    }
    case 'discount': {
      const { discount, priority, exclusive, maxDiscount, redemptionLimit, inBudget } = spec;
      await api.create('/api/v1/vouchers', {
        code, type: 'DISCOUNT', discount, priority, exclusive, maxDiscount, redemptionLimit,
        ...(inBudget ? { campaignId: budgetCampaign } : { currency: 'EUR' }),
      });
      return { code };
    }
  }
}

/** A stack's answer as its preview gives it: no stackId, no redemption ids, never `idempotent`. */
function withoutCommit(outcome: Record<string, any>) {
  const { stackId: _stackId, idempotent: _idempotent, ...rest } = outcome;
  return { ...rest, results: rest.results.map(({ redemptionId: _id, ...r }: Record<string, unknown>) => r) };
}

describe('POST /redemptions/stack/validate', () => {
  it('answers exactly what the stack redeemed right after on the same state answers', async () => {
    // Entries made once and reused across runs: their limits, balances and the budget run out as stacks redeem them.
    const made: Array<Record<string, unknown>> = [];
    await fc.assert(
      fc.asyncProperty(
        fc.array(voucherArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        orderArb,
        async (specs, reused, order) => {
          const fresh = await Promise.all(specs.map(entryFor));
          made.push(...fresh);
          // Some entries made by earlier runs (their state moved on), sometimes the same one twice (duplicate_voucher).
          const vouchers = [...fresh, ...reused.map((n) => made[n % made.length]!)].slice(0, 7);
          const preview = await api.post('/api/v1/redemptions/stack/validate', { vouchers, order });
          expect(preview.status, JSON.stringify(preview.body)).toBe(200);
          const redeemed = await api.post('/api/v1/redemptions/stack', { vouchers, order, idempotencyKey: randomUUID() });
          expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
          expect(preview.body).toEqual(withoutCommit(redeemed.body));
          if (redeemed.body.ok) for (const r of redeemed.body.results) expect(r.redemptionId).toEqual(expect.any(String));
        },
      ),
      { numRuns: 40 },
    );
    // The runs met refusals and successes alike.
    const { rows } = await service.pool.query<{ n: number }>('SELECT count(DISTINCT stack_id)::int AS n FROM redemptions WHERE stack_id IS NOT NULL');
    expect(rows[0]!.n).toBeGreaterThan(3);
  }, 120_000);

  it('commits and reserves nothing: a last use previewed twice is still there for the stack', async () => {
    const code = `L-${randomUUID().slice(0, 10)}`;
    await api.create('/api/v1/vouchers', { code, type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 300 }, currency: 'EUR', redemptionLimit: 1 });
    const gift = `G-${randomUUID().slice(0, 10)}`;
    await api.create('/api/v1/vouchers', { code: gift, type: 'GIFT_CARD', gift: { amount: 1_000, currency: 'EUR' } });
    const body = { vouchers: [{ code }, { code: gift }], order: { amount: 5_000, currency: 'EUR' } };
    const first = await api.post('/api/v1/redemptions/stack/validate', body);
    const second = await api.post('/api/v1/redemptions/stack/validate', body);
    expect(first.body).toEqual({
      ok: true,
      results: [{ voucherCode: code, ok: true, amount: 300, priority: 0 }, { voucherCode: gift, ok: true, amount: 1_000, priority: 0 }],
      order: { amount: 5_000, discountAmount: 300, giftAmount: 1_000, totalAmount: 3_700, currency: 'EUR' },
    });
    expect(second.body).toEqual(first.body);
    const { rows } = await service.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM redemptions WHERE voucher_code = ANY($1)', [[code, gift]]);
    expect(rows[0]!.n).toBe(0);
    const redeemed = await api.post('/api/v1/redemptions/stack', { ...body, idempotencyKey: randomUUID() });
    expect(withoutCommit(redeemed.body)).toEqual(first.body);
    // Now the last use is gone: the preview says so, as the stack would.
    const after = await api.post('/api/v1/redemptions/stack/validate', body);
    expect(after.body).toMatchObject({ ok: false, code: 'redemption_limit_reached' });
  });

  it('refuses bad input with a problem, never a 500, and needs no idempotency key', async () => {
    const bad = await api.post('/api/v1/redemptions/stack/validate', { vouchers: [], order: { amount: 100, currency: 'EUR' } });
    expect(bad.status).toBe(400);
    const both = await api.post('/api/v1/redemptions/stack/validate', { vouchers: [{ code: 'X', tierId: randomUUID() }], order: { amount: 100, currency: 'EUR' } });
    expect(both.status).toBe(400);
    const unknownCustomer = await api.post('/api/v1/redemptions/stack/validate', { vouchers: [{ code: 'X' }], order: { amount: 100, currency: 'EUR' }, customer: { id: randomUUID() } });
    expect(unknownCustomer.body).toMatchObject({ ok: false, code: 'customer_not_found', results: [{ voucherCode: 'X', ok: false, code: 'skipped' }] });
  });
});
