// Bench rows of issue 33: the best deal of a qualification over 10 and 20 offers (half promotion tiers, half vouchers
// assigned to the customer; PERCENT, AMOUNT and FIXED discounts, priorities, an exclusive one, caps) at a fixed
// offered rate, and the stack preview against the stack it previews. Each offer set is in a currency of its own, so
// the tiers and vouchers the other rows seeded never qualify for these carts. Called by run-bench.mjs; nothing here
// imports src/.
import { randomUUID } from 'node:crypto';

export const BEST_DEAL_RATE = 500;

/**
 * `count` offers in `currency`: every other one a tier of a PROMOTION campaign, the others the customer's vouchers.
 * `api(method, path under /api/v1, body)` answers the created resource (test/promotions/best-deal-allocation.test.ts
 * measures what a qualification over these offers allocates).
 */
export async function seedOffers(api, currency, count) {
  const customer = await api('POST', '/customers', { sourceId: `deal-${currency}-${randomUUID().slice(0, 8)}` });
  const campaign = await api('POST', '/campaigns', { name: `best deal ${currency}`, type: 'PROMOTION', currency });
  for (let i = 0; i < count; i++) {
    const discount = [
      { type: 'PERCENT', percentOff: 5 + ((i * 7) % 21) },
      { type: 'AMOUNT', amountOff: 100 + ((i * 337) % 1_500) },
      { type: 'FIXED', fixedAmount: 1_000 + ((i * 911) % 3_000) },
    ][i % 3];
    const settings = { discount, priority: i % 3, exclusive: i === 5, ...(i % 4 === 1 ? { maxDiscount: 1_200 } : {}) };
    if (i % 2 === 0) await api('POST', `/campaigns/${campaign.id}/tiers`, { name: `offer ${i}`, ...settings });
    else await api('POST', '/vouchers', { code: `DEAL-${currency}-${i}-${randomUUID().slice(0, 6)}`, type: 'DISCOUNT', currency, customerId: customer.id, ...settings });
  }
  return customer;
}

/**
 * The best-deal rows (10 and 20 offers at BEST_DEAL_RATE req/s offered) and the stack preview row (S1, S2, S3 as the
 * 3-voucher stack row redeems them). `loadService(name, options)` is run-bench's measured load.
 */
export async function bestDealRows({ api, baseUrl, auth, loadService, order }) {
  const rows = {};
  for (const [count, currency] of [[10, 'GBP'], [20, 'CHF']]) {
    const name = `best deal, ${count} offers, ${BEST_DEAL_RATE} req/s offered`;
    const customer = await seedOffers(api, currency, count);
    const body = () => {
      const amount = 5_000 + Math.floor(Math.random() * 15_000);
      return JSON.stringify({ order: { amount, currency, items: [{ productId: 'p', quantity: 1, price: amount }] }, customer: { id: customer.id }, bestDeal: true });
    };
    const sample = await (await fetch(`${baseUrl}/api/v1/qualifications`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: body() })).json();
    if (sample.data?.length !== count || !sample.bestDeal?.exact) throw new Error(`best deal over ${count} offers: ${JSON.stringify(sample).slice(0, 500)}`);
    rows[count] = await loadService(name, {
      url: baseUrl,
      connections: 10,
      overallRate: BEST_DEAL_RATE,
      headers: auth,
      requests: [{ method: 'POST', path: '/api/v1/qualifications', setupRequest: (req) => ({ ...req, body: body() }) }],
    });
  }
  const preview = await loadService('3-voucher stack preview', {
    url: `${baseUrl}/api/v1/redemptions/stack/validate`,
    headers: auth,
    body: JSON.stringify({ vouchers: [{ code: 'S1' }, { code: 'S2' }, { code: 'S3' }], order }),
  });
  return { deal10: rows[10], deal20: rows[20], preview };
}
