// Editing a discount in the dashboard, in real Chromium against the real service and PostgreSQL: an existing campaign's
// voucher template (a FIXED discount with a target, prefilled and kept by a save that changes nothing, then changed to
// buy X get Y with its targets) and an existing promotion's tiers (to FREE_SHIPPING, and to buy X get Y); what the API
// stores is what was entered, and an entry the API refuses shows its problem. docs/dashboard-discount-edit.png: the form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import type { TestService } from '../support/service.js';
import { openDashboardBrowser, serviceWithOwner, type DashboardBrowser } from './browser.js';

const OWNER = { email: 'discounts-owner@example.com', password: 'the owner password' };
const BAGS = { type: 'FIXED', fixedAmount: 2_000, target: { categories: ['bags'], metadata: { brand: 'acme' } } };

let service: TestService;
let browser: DashboardBrowser;
let api: ApiClient;
let bagsId: string;
let promotionId: string;
let fiveOffId: string;
let shoesId: string;

beforeAll(async () => {
  ({ service, api } = await serviceWithOwner(OWNER));
  const created = async (path: string, body: unknown) => {
    const res = await api.post(path, body);
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  bagsId = await created('/api/v1/campaigns', { name: 'Autumn bags', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: BAGS, redemptionLimit: 5 } });
  promotionId = await created('/api/v1/campaigns', { name: 'Winter promotion', type: 'PROMOTION', currency: 'EUR' });
  fiveOffId = await created(`/api/v1/campaigns/${promotionId}/tiers`, { name: 'Five off', discount: { type: 'AMOUNT', amountOff: 500 } });
  shoesId = await created(`/api/v1/campaigns/${promotionId}/tiers`, { name: 'Shoes ten', discount: { type: 'PERCENT', percentOff: 10, amountLimit: 1_500, target: { skus: ['SHOE-1'] } } });
  browser = await openDashboardBrowser();
  await browser.signIn(service.baseUrl, OWNER.email, OWNER.password);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

const template = async () => (await api.get(`/api/v1/campaigns/${bagsId}`)).body.voucher;
const tierDiscount = async (id: string) => (await api.get(`/api/v1/promotions/tiers/${id}`)).body.discount;

describe('editing a discount in Chromium', () => {
  it('prefills an existing campaign’s FIXED discount with its target, and a save that changes nothing keeps it', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('table', { name: 'Campaigns' }).getByRole('link', { name: 'Autumn bags' }).click();
    await page.getByText('Total of categories bags; metadata brand = "acme" becomes 20.00 EUR').waitFor();
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit campaign' });
    expect(await form.getByLabel('Each voucher gives').inputValue()).toBe('fixed');
    expect(await form.getByLabel('Value', { exact: true }).inputValue()).toBe('20.00');
    expect(await form.getByLabel('Categories', { exact: true }).inputValue()).toBe('bags');
    expect(await form.getByLabel('Metadata (JSON)', { exact: true }).inputValue()).toBe('{"brand":"acme"}');
    await form.getByRole('button', { name: 'Save campaign' }).click();
    await page.getByRole('button', { name: 'Edit' }).waitFor();
    expect(await template()).toMatchObject({ type: 'DISCOUNT', discount: BAGS, redemptionLimit: 5 });
  }, 60_000);

  it('changes the campaign’s discount to buy X get Y with the items bought and given, as stored by the API', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit campaign' });
    await form.getByLabel('Each voucher gives').selectOption('buy-x-get-y');
    await form.getByLabel('Categories', { exact: true }).fill('shirts, tees');
    await form.getByLabel('Metadata (JSON)', { exact: true }).fill('');
    await form.getByLabel('Buy quantity').fill('2');
    await form.getByLabel('Get quantity').fill('1');
    await form.getByLabel('Percent off the units given').fill('50');
    await form.getByLabel('At most … times').fill('2');
    await form.getByLabel('Get categories', { exact: true }).fill('socks');
    await browser.shot('discount-edit', 'dashboard-discount-edit.png');
    await form.getByRole('button', { name: 'Save campaign' }).click();
    await page.getByText('Buy 2 get 1 50% off (categories shirts, tees → categories socks), at most 2×').waitFor();
    expect(await template()).toMatchObject({
      type: 'DISCOUNT',
      redemptionLimit: 5,
      discount: { type: 'BUY_X_GET_Y', buy: { quantity: 2, target: { categories: ['shirts', 'tees'] } }, get: { quantity: 1, percentOff: 50, target: { categories: ['socks'] } }, maxApplications: 2 },
    });
  }, 60_000);

  it('shows the API’s problem for a quantity it refuses, and stores nothing', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit campaign' });
    expect(await form.getByLabel('Get categories', { exact: true }).inputValue()).toBe('socks');
    await form.getByLabel('Buy quantity').fill('2000000');
    await form.getByRole('button', { name: 'Save campaign' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^the request is invalid \(voucher\.discount\.buy\.quantity: Too big/);
    await form.getByRole('button', { name: 'Cancel' }).click();
    expect((await template()).discount.buy.quantity).toBe(2);
  }, 60_000);

  it('changes a tier to free shipping, prefilled with its amount off', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('table', { name: 'Campaigns' }).getByRole('link', { name: 'Winter promotion' }).click();
    const tiers = page.getByRole('table', { name: 'Promotion tiers' });
    await tiers.getByText('5.00 EUR off').waitFor();
    await tiers.getByRole('button', { name: 'Edit Five off' }).click();
    const form = page.getByRole('form', { name: 'Edit tier' });
    expect(await form.getByLabel('The tier gives').inputValue()).toBe('amount');
    expect(await form.getByLabel('Tier value').inputValue()).toBe('5.00');
    await form.getByLabel('The tier gives').selectOption('free-shipping');
    await form.getByRole('button', { name: 'Save tier' }).click();
    await tiers.getByRole('row', { name: /Five off\s*Free shipping/ }).waitFor();
    expect(await tierDiscount(fiveOffId)).toEqual({ type: 'FREE_SHIPPING' });
  }, 60_000);

  it('changes a tier to buy X get Y with a metadata target, after showing the API’s problem for metadata it refuses', async () => {
    const { page } = browser;
    const tiers = page.getByRole('table', { name: 'Promotion tiers' });
    await tiers.getByRole('button', { name: 'Edit Shoes ten' }).click();
    const form = page.getByRole('form', { name: 'Edit tier' });
    expect(await form.getByLabel('Tier value').inputValue()).toBe('10');
    expect(await form.getByLabel('At most off (amount)').inputValue()).toBe('15.00');
    expect(await form.getByLabel('SKUs', { exact: true }).inputValue()).toBe('SHOE-1');
    await form.getByLabel('The tier gives').selectOption('buy-x-get-y');
    await form.getByLabel('SKUs', { exact: true }).fill('');
    await form.getByLabel('Categories', { exact: true }).fill('shoes');
    await form.getByLabel('Metadata (JSON)', { exact: true }).fill('{"size": ["M", "L"]}');
    await form.getByLabel('Buy quantity').fill('1');
    await form.getByLabel('Get SKUs', { exact: true }).fill('SOCK-1');
    await form.getByRole('button', { name: 'Save tier' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^the request is invalid \(discount\.buy\.target\.metadata\.size: /);
    expect((await tierDiscount(shoesId)).type).toBe('PERCENT');

    await form.getByLabel('Metadata (JSON)', { exact: true }).fill('{"size": "M"}');
    await form.getByRole('button', { name: 'Save tier' }).click();
    await tiers.getByText('Buy 1 get 1 free (categories shoes; metadata size = "M" → SKUs SOCK-1)').waitFor();
    expect(await tierDiscount(shoesId)).toEqual({
      type: 'BUY_X_GET_Y',
      buy: { quantity: 1, target: { categories: ['shoes'], metadata: { size: 'M' } } },
      get: { quantity: 1, percentOff: 100, target: { skus: ['SOCK-1'] } },
    });
  }, 60_000);
});
