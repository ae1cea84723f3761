// The dashboard's Orders page in real Chromium against the real service, engine and PostgreSQL: an order redeemed
// with a discount, a gift card and points, found from the orders list; a return of more than the line holds refused
// (409 return_exceeds_order, shown as such); a partial return through the form listed with what it gave back, and the
// order PARTIALLY_RETURNED; the return's figures on Insights. The README's screenshot goes to docs/dashboard-order-returns.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import type { TestService } from '../support/service.js';
import { openShop, placeOrder, type PlacedOrder } from '../orders/returns-support.js';
import { openDashboardBrowser, serviceWithOwner, type DashboardBrowser } from './browser.js';

const OWNER = { email: 'returns-owner@example.com', password: 'the owner password' };

let service: TestService;
let browser: DashboardBrowser;
let api: ApiClient;
let placed: PlacedOrder;
let sourceId: string;

beforeAll(async () => {
  ({ service, api } = await serviceWithOwner(OWNER));
  const shop = await openShop(api);
  placed = await placeOrder(api, service.pool, shop, {
    items: [
      { sku: 'shoe', quantity: 1, price: 6_000 },
      { sku: 'sock', quantity: 4, price: 500 },
      { sku: 'cap', quantity: 2, price: 1_000 },
    ],
    points: 3_000,
    gift: 2_000,
    pointsMoney: 1_500,
    referral: false,
  });
  sourceId = (await api.get(`/api/v1/orders/${placed.orderId}`)).body.sourceId;
  browser = await openDashboardBrowser();
  await browser.signIn(service.baseUrl, OWNER.email, OWNER.password);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

const rowTexts = async (label: string) => (await browser.page.getByRole('table', { name: label }).getByRole('row').allTextContents()).slice(1);

describe('the Orders page in Chromium', () => {
  it('finds the order from the list, with its items and redemptions', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('table', { name: 'Orders' }).getByRole('link', { name: sourceId }).click();
    await page.getByRole('heading', { level: 1, name: `Order ${sourceId}` }).waitFor();
    expect(await page.getByLabel('Order', { exact: true }).textContent()).toContain('Paid');
    expect(await rowTexts('Order items')).toHaveLength(3);
    expect(await rowTexts('Order redemptions')).toHaveLength(3);
    await page.getByText('Nothing returned yet.').waitFor();
  }, 60_000);

  it('refuses a return of more than the line holds, clearly, and returns nothing', async () => {
    const { page } = browser;
    await page.getByLabel('Line').selectOption({ index: 1 });
    await page.getByLabel('Quantity').fill('5');
    await page.getByRole('button', { name: 'Return', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^Refused: more than is left of the order\./);
    expect((await api.get(`/api/v1/orders/${placed.orderId}/returns`)).body.data).toEqual([]);
  }, 60_000);

  it('returns two socks through the form: the return is listed with what it gave back and the order is PARTIALLY_RETURNED', async () => {
    const { page } = browser;
    await page.getByLabel('Quantity').fill('2');
    await page.getByLabel('Reason').fill('too small');
    await page.getByRole('button', { name: 'Return', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'the order is partially returned' }).waitFor();
    await page.getByRole('table', { name: 'Order returns' }).waitFor();

    const listed = (await api.get(`/api/v1/orders/${placed.orderId}/returns`)).body.data;
    expect(listed).toHaveLength(1);
    const [ret] = listed;
    expect(ret).toMatchObject({ items: [{ index: 1, sku: 'sock', quantity: 2 }], reason: 'too small' });
    expect(ret.reversals.discount).toBeGreaterThan(0);
    expect(ret.reversals.giftCredits).toBeGreaterThan(0);
    expect(ret.reversals.pointsPaid).toBeGreaterThan(0);
    const order = (await api.get(`/api/v1/orders/${placed.orderId}`)).body;
    expect(order).toMatchObject({ status: 'PARTIALLY_RETURNED', returnedAmount: ret.amount });

    const eur = (n: number) => `${Math.floor(n / 100)}.${String(n % 100).padStart(2, '0')} EUR`;
    const rows = await rowTexts('Order returns');
    expect(rows).toHaveLength(1);
    for (const text of [eur(ret.amount), '2 × sock', eur(ret.reversals.discount), eur(ret.reversals.giftCredits), String(ret.reversals.pointsPaid), 'too small']) expect(rows[0]).toContain(text);
    await page.getByLabel('Order', { exact: true }).getByText('Partially returned').waitFor();
    expect(await page.getByLabel('Order', { exact: true }).textContent()).toContain(eur(ret.amount));
    await browser.shot('order-returns', 'dashboard-order-returns.png');

    // The list shows the new status and what came back.
    await page.getByRole('link', { name: '← Orders' }).click();
    await page.getByRole('table', { name: 'Orders' }).getByRole('link', { name: sourceId }).waitFor();
    const listRow = (await rowTexts('Orders'))[0]!;
    expect(listRow).toContain('Partially returned');
    expect(listRow).toContain(eur(ret.amount));
  }, 60_000);

  it('shows what the return gave back on Insights', async () => {
    const { page } = browser;
    const [ret] = (await api.get(`/api/v1/orders/${placed.orderId}/returns`)).body.data;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Insights' }).click();
    const card = page.getByLabel('Returns EUR');
    await card.waitFor();
    const text = await card.textContent();
    expect(text).toContain('1returns, last 30 days');
    expect(text).toContain(`${(ret.amount / 100).toFixed(2)}returned (EUR)`);
    expect(text).toContain(`${(ret.reversals.discount / 100).toFixed(2)}discount returned`);
    expect(text).toContain(`${ret.reversals.pointsPaid}points paid back`);
    expect(text).toContain(`${ret.reversals.pointsEarned}points earned taken`);
    await browser.shot('insights-returns');
  }, 60_000);
});
