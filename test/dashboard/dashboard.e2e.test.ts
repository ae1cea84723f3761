// The dashboard in real Chromium (playwright-core driving the system's /usr/bin/chromium, headless, never a
// downloaded browser) against the real service and the real webhook pipeline (pg-boss, a receiver on 127.0.0.1):
// sign in, campaigns (create, edit, bulk generation), API keys, a redemption seen and rolled back, vouchers and a gift
// card's ledger, a webhook delivered and replayed, insights, the audit log, and a viewer who cannot write (the Loyalty
// page has its own file, loyalty.e2e.test.ts). Every page is saved as a screenshot under test-results/dashboard/.
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/logger.js';
import { seedBootstrapOwner } from '../../src/runtime.js';
import { defaultServiceSettings } from '../../src/composition.js';
import type { TestService } from '../support/service.js';
import { staffUser, useStaffSettings } from '../staff/staff-support.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { startWebhookHarness, type WebhookHarness } from '../webhooks/support.js';
import { openDashboardBrowser, type DashboardBrowser } from './browser.js';

const OWNER = { email: 'owner@example.com', password: 'the owner password' };

let harness: WebhookHarness;
let service: TestService;
let receiver: Receiver;
let key: string;
let browser: DashboardBrowser;
let context: BrowserContext;
let page: Page;

const shot = (name: string) => browser.shot(name);
const signIn = (email: string, password: string) => browser.signIn(service.baseUrl, email, password);
const signOut = () => browser.signOut();

beforeAll(async () => {
  // Webhook targets on 127.0.0.1 are allowed here, and the delivery worker runs in this process.
  harness = await startWebhookHarness();
  service = harness.service;
  useStaffSettings(service);
  receiver = await startReceiver();
  const workspace = await service.newWorkspace();
  key = workspace.key;
  await seedBootstrapOwner(service.pool, createLogger('silent'), defaultServiceSettings(), workspace.workspaceId, OWNER.email, OWNER.password);
  browser = await openDashboardBrowser();
  ({ context, page } = browser);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await harness?.close();
});

describe('the dashboard in Chromium', () => {
  it('signs in with the labelled form, names every page, and keeps the session in an HttpOnly cookie only', async () => {
    await page.goto(`${service.baseUrl}/dashboard/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await shot('sign-in');
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('the email or the password is wrong');
    await signIn(OWNER.email, OWNER.password);
    const names = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    expect(names).toEqual(['Campaigns', 'Vouchers', 'Customers', 'Orders', 'Redemptions', 'Loyalty', 'Referrals', 'Webhooks', 'Insights', 'Audit log', 'Settings']);
    const cookies = await context.cookies(service.baseUrl);
    expect(cookies).toMatchObject([{ name: 'promotions_session', httpOnly: true, sameSite: 'Strict', path: '/' }]);
    expect(await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })')).toBe('{}{}');
  }, 60_000);

  it('creates a campaign', async () => {
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Spring sale');
    await page.getByLabel('Currency').fill('EUR');
    await page.getByLabel('Value').fill('10');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('table', { name: 'Campaigns' }).getByText('Spring sale').waitFor();
    await shot('campaigns');
    const listed = await service.api(key).get('/api/v1/campaigns');
    expect(listed.body.data.map((c: any) => c.name)).toContain('Spring sale');
  }, 60_000);

  it('sets a target, buy X get Y and free shipping in the campaign form, and adds tiers with them to a promotion', async () => {
    const api = service.api(key);
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Shirts 3 for 2');
    await page.getByLabel('Each voucher gives').selectOption('buy-x-get-y');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('alert').filter({ hasText: 'Buy X get Y needs the items bought' }).waitFor();
    await page.getByLabel('Categories', { exact: true }).fill('shirts, tees');
    await page.getByLabel('Buy quantity').fill('2');
    await page.getByLabel('Get quantity').fill('1');
    await page.getByLabel('At most … times').fill('3');
    await shot('campaign-buy-x-get-y');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('table', { name: 'Campaigns' }).getByRole('link', { name: 'Shirts 3 for 2' }).click();
    await page.getByText('Buy 2 get 1 free (categories shirts, tees), at most 3×').waitFor();
    const shirts = (await api.get('/api/v1/campaigns?limit=100')).body.data.find((c: any) => c.name === 'Shirts 3 for 2');
    expect(shirts.voucher.discount).toEqual({ type: 'BUY_X_GET_Y', buy: { quantity: 2, target: { categories: ['shirts', 'tees'] } }, get: { quantity: 1, percentOff: 100 }, maxApplications: 3 });

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Summer promotion');
    await page.getByLabel('Type').selectOption('PROMOTION');
    await page.getByLabel('Each voucher gives').selectOption('none');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('table', { name: 'Campaigns' }).getByRole('link', { name: 'Summer promotion' }).click();
    await page.getByRole('button', { name: 'New tier' }).click();
    await page.getByLabel('Name', { exact: true }).fill('10% off socks');
    await page.getByLabel('Tier value').fill('10');
    await page.getByLabel('Categories', { exact: true }).fill('socks');
    await page.getByRole('button', { name: 'Create tier' }).click();
    await page.getByRole('table', { name: 'Promotion tiers' }).getByText('10% off on categories socks').waitFor();
    await page.getByRole('button', { name: 'New tier' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Ships free');
    await page.getByLabel('The tier gives').selectOption('free-shipping');
    await page.getByRole('button', { name: 'Create tier' }).click();
    await page.getByRole('table', { name: 'Promotion tiers' }).getByText('Free shipping').waitFor();
    await shot('campaign-tiers');
    const summer = (await api.get('/api/v1/campaigns?limit=100')).body.data.find((c: any) => c.name === 'Summer promotion');
    const tiers = (await api.get(`/api/v1/campaigns/${summer.id}/tiers`)).body.data;
    expect(tiers.map((t: any) => [t.name, t.discount])).toEqual([
      ['Ships free', { type: 'FREE_SHIPPING' }],
      ['10% off socks', { type: 'PERCENT', percentOff: 10, target: { categories: ['socks'] } }],
    ]);
    // What the tiers give a cart: 10% of the socks only, and the shipping.
    const cart = { amount: 4_490, currency: 'EUR', shipping: { amount: 490 }, items: [{ sku: 'tee', quantity: 1, price: 3_000, categories: ['shirts'] }, { sku: 'sock', quantity: 2, price: 500, categories: ['socks'] }] };
    const offers = (await api.post('/api/v1/promotions/validate', { order: cart })).body.promotions;
    expect(offers.map((o: any) => [o.name, o.discount.amount])).toEqual([
      ['Ships free', 490],
      ['10% off socks', 100],
    ]);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
  }, 60_000);

  it('creates an API key shown once, which works, and revokes it', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('checkout');
    await page.getByRole('checkbox', { name: 'vouchers:write' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const plaintext = (await page.getByTestId('new-key').textContent())!.trim();
    expect(plaintext).toMatch(/^service_[A-Za-z0-9]{12}_[A-Za-z0-9]{40}$/);
    await shot('settings-api-key-created');
    expect((await service.api(plaintext).get('/api/v1/vouchers')).status).toBe(200);

    await page.reload();
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: 'checkout' });
    await row.waitFor();
    expect(await page.content()).not.toContain(plaintext);
    expect(await row.textContent()).toContain('vouchers:write');
    await shot('settings');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await service.api(plaintext).get('/api/v1/vouchers')).status).toBe(401);
  }, 60_000);

  it('shows the audit log naming the staff user, with filters', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    const table = page.getByRole('table', { name: 'Audit entries' });
    // Three campaigns were created above: each has its entry.
    await table.getByText('campaigns.create').first().waitFor();
    const campaignRow = table.getByRole('row').filter({ hasText: 'campaigns.create' }).first();
    expect(await campaignRow.textContent()).toContain(OWNER.email);
    await page.getByLabel('Operation').fill('apiKeys.revoke');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => (await table.getByRole('row').allTextContents()).slice(1).every((r) => r.includes('apiKeys.revoke'))).toBe(true);
    expect(await table.getByRole('row').count()).toBe(2);
    await page.getByRole('button', { name: 'Clear' }).click();
    await table.getByText('sessions.create').first().waitFor();
    await shot('audit-log');
  }, 60_000);

  it('edits a campaign and generates its vouchers in bulk, with progress', async () => {
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('table', { name: 'Campaigns' }).getByRole('link', { name: 'Spring sale' }).click();
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Spring sale 2026');
    await page.getByLabel('Uses per voucher').fill('1');
    await shot('campaign-edit');
    await page.getByRole('button', { name: 'Save campaign' }).click();
    await page.getByRole('heading', { level: 1, name: 'Spring sale 2026' }).waitFor();
    await page.getByLabel('Generate', { exact: true }).fill('1200');
    await page.getByLabel('Prefix').fill('SPRING-');
    await page.getByRole('button', { name: 'Generate vouchers' }).click();
    await page.getByRole('status').filter({ hasText: '1200 of 1200 generated' }).waitFor();
    expect(await page.getByRole('progressbar', { name: 'Generation progress' }).getAttribute('value')).toBe('1200');
    const table = page.getByRole('table', { name: 'Campaign vouchers' });
    await table.getByText(/^SPRING-/).first().waitFor();
    await shot('campaign-detail');
    const campaigns = await service.api(key).get('/api/v1/campaigns');
    const campaign = campaigns.body.data.find((c: any) => c.name === 'Spring sale 2026');
    expect(campaign.voucher).toMatchObject({ discount: { type: 'PERCENT', percentOff: 10 }, redemptionLimit: 1 });
    const { rows } = await service.pool.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE code LIKE 'SPRING-%')::int AS prefixed FROM vouchers WHERE campaign_id = $1`, [campaign.id]);
    expect(rows[0]).toEqual({ n: 1200, prefixed: 1200 });
  }, 60_000);

  it('shows a redemption made through the API in Redemptions, filters, and rolls it back', async () => {
    const api = service.api(key);
    await api.create('/api/v1/vouchers', { code: 'DASH-5OFF', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, currency: 'EUR' });
    await api.create('/api/v1/vouchers', { code: 'OTHER-5OFF', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 }, currency: 'EUR' });
    const customer = { sourceId: 'cust-ada', email: 'ada@example.com', name: 'Ada Lovelace' };
    const redeemed = await api.post('/api/v1/vouchers/DASH-5OFF/redemption', { order: { id: 'order-1', amount: 4000, currency: 'EUR' }, customer });
    expect(redeemed.body).toMatchObject({ ok: true });
    expect((await api.post('/api/v1/vouchers/OTHER-5OFF/redemption', { order: { amount: 3000, currency: 'EUR' } })).body.ok).toBe(true);

    await page.getByRole('link', { name: 'Redemptions' }).click();
    const table = page.getByRole('table', { name: 'Redemptions' });
    await table.getByText('OTHER-5OFF').waitFor();
    await page.getByLabel('Customer').fill('ada@example.com');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => (await table.getByRole('row').allTextContents()).slice(1)).toEqual([expect.stringContaining('DASH-5OFF')]);
    const row = table.getByRole('row').filter({ hasText: 'DASH-5OFF' });
    expect(await row.textContent()).toContain('5.00 EUR');
    await shot('redemptions');
    await row.getByRole('button', { name: 'Rollback' }).click();
    await row.getByText('Rolled back').waitFor();
    expect(await row.getByRole('button', { name: 'Rollback' }).count()).toBe(0);
    const after = await api.get(`/api/v1/redemptions/${redeemed.body.redemption.id}`);
    expect(after.body.status).toBe('ROLLED_BACK');

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Status').selectOption('ROLLED_BACK');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => (await table.getByRole('row').allTextContents()).slice(1)).toEqual([expect.stringContaining('DASH-5OFF')]);
    await shot('redemptions-rolled-back');
  }, 60_000);

  it('finds a voucher by code, shows its redemptions and a gift card ledger, and disables and enables it', async () => {
    const api = service.api(key);
    await api.create('/api/v1/vouchers', { code: 'GIFT-50', type: 'GIFT_CARD', gift: { amount: 5000, currency: 'EUR' } });
    expect((await api.post('/api/v1/vouchers/GIFT-50/redemption', { order: { amount: 2000, currency: 'EUR' }, amount: 2000 })).body.ok).toBe(true);

    await page.getByRole('link', { name: 'Vouchers' }).click();
    await page.getByRole('table', { name: 'Vouchers' }).getByText('GIFT-50').waitFor();
    await shot('vouchers');
    await page.getByLabel('Voucher code').fill('DASH-5OFF');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('table', { name: 'Voucher redemptions' }).getByText('Rolled back').waitFor();

    await page.goto(`${service.baseUrl}/dashboard/#/vouchers/GIFT-50`);
    const ledger = page.getByRole('table', { name: 'Gift card ledger' });
    await ledger.getByText('redemption').waitFor();
    expect(await ledger.getByRole('row').allTextContents()).toEqual([
      expect.stringContaining('Entry'),
      expect.stringMatching(/redemption.*-20\.00 EUR.*30\.00 EUR/),
      expect.stringMatching(/credits added.*\+50\.00 EUR.*50\.00 EUR/),
    ]);
    await page.getByText('30.00 EUR of 50.00').waitFor();
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect((await api.get('/api/v1/vouchers/GIFT-50')).body.active).toBe(false);
    await shot('voucher-gift-card');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    expect((await api.get('/api/v1/vouchers/GIFT-50')).body.active).toBe(true);
  }, 60_000);

  it('creates a webhook endpoint (secret shown once), shows its delivery, replays it to the receiver, and rotates the secret', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'New endpoint' }).click();
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('Description').fill('local receiver');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = (await page.getByTestId('new-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await shot('webhooks');
    const customer = await service.api(key).create<{ id: string }>('/api/v1/customers', { sourceId: 'cust-hook', email: 'hook@example.com' });
    const [first] = await receiver.waitFor(1);
    expect(first!.body).toMatchObject({ type: 'customer.created', payload: { customerId: customer.id } });

    await page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('link', { name: receiver.url }).click();
    const deliveries = page.getByRole('table', { name: 'Deliveries' });
    const row = deliveries.getByRole('row').filter({ hasText: 'customer.created' });
    await row.getByText('Delivered').waitFor();
    expect(await row.textContent()).toContain('200');
    expect(await page.content()).not.toContain(secret);
    await row.getByRole('button', { name: 'Replay' }).click();
    const [, again] = await receiver.waitFor(2);
    expect(again!.body.id).toBe(first!.body.id);
    await expect.poll(() => row.getByRole('button', { name: /^Attempts of/ }).textContent(), { timeout: 10_000 }).toBe('2');
    await row.getByRole('button', { name: /^Attempts of/ }).click();
    await expect.poll(async () => (await page.getByRole('table', { name: 'Attempts' }).getByRole('row').allTextContents()).length).toBe(3);
    expect(await page.getByRole('table', { name: 'Attempts' }).textContent()).toContain('replay');
    await shot('webhook-endpoint');

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByTestId('new-secret').textContent())!.trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByText('previous signs until').waitFor();
  }, 60_000);

  it('shows the redemptions, the rollback, failures, top campaigns and webhook health in Insights', async () => {
    const api = service.api(key);
    const campaign = (await api.get('/api/v1/campaigns')).body.data.find((c: any) => c.name === 'Spring sale 2026');
    const [spring] = (await api.get(`/api/v1/vouchers?campaignId=${campaign.id}&limit=1`)).body.data;
    const order = { amount: 2000, currency: 'EUR' };
    expect((await api.post(`/api/v1/vouchers/${spring.code}/redemption`, { order })).body.ok).toBe(true);
    expect((await api.post(`/api/v1/vouchers/${spring.code}/redemption`, { order })).body).toMatchObject({ ok: false, code: 'redemption_limit_reached' });
    await page.getByRole('link', { name: 'Insights' }).click();
    const totals = page.getByLabel('Totals', { exact: true });
    // Figures reach the insights within 5 s of the commit, and answers are cached up to 2 s: ask again until then.
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: '7 days' }).click();
          await page.getByRole('button', { name: '30 days' }).click();
          return totals.textContent().catch(() => '');
        },
        { timeout: 15_000, interval: 500 },
      )
      .toMatch(/^4Redemptions, last 30 days1Rollbacks/);
    expect(await totals.textContent()).toContain('12.00');
    await page.getByRole('img', { name: 'Redemptions per day' }).locator('canvas').waitFor();
    await page.getByRole('img', { name: 'Discount per day' }).locator('canvas').waitFor();
    await page.getByRole('region', { name: 'Top campaigns' }).getByText('Spring sale 2026').waitFor();
    // Refusals are counted in memory and written every 2 s: ask again until they are in.
    const failures = page.getByRole('region', { name: 'Failures by code' });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: '7 days' }).click();
          await page.getByRole('button', { name: '30 days' }).click();
          return failures.textContent();
        },
        { timeout: 15_000, interval: 500 },
      )
      .toContain('redemption_limit_reached');
    await expect.poll(() => page.getByRole('region', { name: 'Webhook health' }).textContent()).toMatch(/Delivered[1-9].*Dead0/);
    expect(await page.getByRole('alert').count()).toBe(0);
    await shot('insights');
  }, 60_000);

  it('edits the workspace settings, and shows a refusal as the problem detail', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Time zone').fill('Mars/Olympus_Mons');
    await page.getByRole('button', { name: 'Save workspace' }).click();
    const refusal = page.getByRole('form', { name: 'Workspace settings' }).getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/timeZone/);
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await page.getByLabel('Workspace name').fill('Dashboard shop');
    await page.getByRole('button', { name: 'Save workspace' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await service.api(key).get('/api/v1/workspace')).body).toMatchObject({ name: 'Dashboard shop', timeZone: 'Europe/Berlin' });
    await shot('settings-workspace');
  }, 60_000);

  it("asks a money campaign for its currency until the workspace has a default, then counts it in the default; a referral program for its referrer reward", async () => {
    const api = service.api(key);
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Five off');
    await page.getByLabel('Each voucher gives').selectOption('amount');
    await page.getByLabel('Value').fill('5.00');
    const currency = page.getByLabel('Currency');
    expect(await currency.getAttribute('required')).not.toBeNull();
    await page.getByText('Amounts need a currency: the workspace has no default currency.').waitFor();
    await shot('campaign-currency-asked');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    expect(await currency.evaluate((input) => (input as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing)).toBe(true);
    expect((await api.get('/api/v1/campaigns?limit=100')).body.data.map((c: any) => c.name)).not.toContain('Five off');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Default currency').fill('eur');
    await page.getByRole('button', { name: 'Save workspace' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await expect.poll(() => page.getByLabel('Default currency').inputValue()).toBe('EUR');
    expect((await api.get('/api/v1/workspace')).body.defaultCurrency).toBe('EUR');
    await shot('settings-default-currency');

    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Five off');
    await page.getByLabel('Each voucher gives').selectOption('amount');
    await page.getByLabel('Value').fill('5.00');
    await page.getByText('Left empty, amounts are in the workspace default, EUR.').waitFor();
    expect(await page.getByLabel('Currency').getAttribute('required')).toBeNull();
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('table', { name: 'Campaigns' }).getByRole('link', { name: 'Five off' }).click();
    await page.getByLabel('Generate', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Generate vouchers' }).click();
    await page.getByRole('status').filter({ hasText: '2 of 2 generated' }).waitFor();
    const fiveOff = (await api.get('/api/v1/campaigns?limit=100')).body.data.find((c: any) => c.name === 'Five off');
    expect(fiveOff).toMatchObject({ currency: null, voucher: { discount: { type: 'AMOUNT', amountOff: 500 } } });
    const made = (await api.get(`/api/v1/vouchers?campaignId=${fiveOff.id}`)).body.data;
    expect(made.map((v: any) => v.currency)).toEqual(['EUR', 'EUR']);

    const mug = await api.create('/api/v1/rewards', { name: 'Dashboard mug', type: 'MATERIAL' });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Bring a friend');
    await page.getByLabel('Type').selectOption('REFERRAL_PROGRAM');
    await page.getByLabel('Value').fill('10');
    await page.getByLabel('Referrer reward').selectOption({ label: 'Dashboard mug' });
    await shot('campaign-referral-form');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('table', { name: 'Campaigns' }).getByText('Bring a friend').waitFor();
    const referral = (await api.get('/api/v1/campaigns?type=REFERRAL_PROGRAM')).body.data.find((c: any) => c.name === 'Bring a friend');
    expect(referral.referral).toMatchObject({ referrerRewards: [{ rewardId: mug.id }] });
  }, 60_000);

  it('shows a customer with their redemptions', async () => {
    await page.getByRole('link', { name: 'Customers' }).click();
    await page.getByLabel('Email or source id').fill('cust-ada');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('table', { name: 'Customers' }).getByRole('link', { name: 'Ada Lovelace' }).click();
    await page.getByRole('table', { name: 'Customer redemptions' }).getByText('DASH-5OFF').waitFor();
    await shot('customer');
  }, 60_000);

  it('shows a referral program\'s conversions', async () => {
    const api = service.api(key);
    const mug = await api.create('/api/v1/rewards', { name: 'Thank-you mug', type: 'MATERIAL' });
    const program = await api.create('/api/v1/campaigns', {
      name: 'Dash referrals', type: 'REFERRAL_PROGRAM', currency: 'EUR', voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 500 } },
      referral: { confirmOn: 'REDEMPTION', referrerRewards: [{ rewardId: mug.id }] },
    });
    const code = (await api.post(`/api/v1/referrals/programs/${program.id}/codes`, { customer: { sourceId: 'dash-referrer' } })).body.code;
    expect((await api.post(`/api/v1/vouchers/${code}/redemption`, { order: { amount: 2_000, currency: 'EUR' }, customer: { sourceId: 'dash-referee' } })).body.ok).toBe(true);
    await page.getByRole('link', { name: 'Referrals', exact: true }).click();
    await page.getByRole('table', { name: 'Referral programs' }).getByRole('link', { name: 'Dash referrals' }).click();
    await page.getByRole('table', { name: 'Conversions' }).getByText(code).waitFor();
    expect(await page.getByRole('table', { name: 'Conversions' }).getByText('CONFIRMED').count()).toBe(1);
    await shot('referrals-program');
  }, 60_000);

  it('renders every other page', async () => {
    for (const [name, file] of [
      ['Customers', 'customers'],
      ['Loyalty', 'loyalty'],
      ['Referrals', 'referrals'],
    ] as const) {
      await page.getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { level: 1, name }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('alert').count(), name).toBe(0);
      await shot(file);
    }
    await signOut();
  }, 60_000);

  it('hides writes from a viewer, and the server refuses them anyway', async () => {
    const viewer = await staffUser(service, key, 'viewer');
    await signIn(viewer.email, 'correct horse battery staple');
    await page.getByRole('table', { name: 'Campaigns' }).getByText('Spring sale').waitFor();
    expect(await page.getByRole('button', { name: 'New campaign' }).count()).toBe(0);
    await shot('viewer-campaigns');
    const status = await page.evaluate(async () => {
      const res = await fetch('/api/rpc/campaigns.create', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'sneaky', type: 'DISCOUNT_COUPONS' }) });
      return res.status;
    });
    expect(status).toBe(403);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByText('Your role cannot see API keys.').waitFor();
    expect(await page.getByRole('button', { name: 'Create API key' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByText('Your role cannot see the audit log.').waitFor();
    await shot('viewer-audit-log');
    await page.getByRole('link', { name: 'Redemptions' }).click();
    await page.getByRole('table', { name: 'Redemptions' }).getByText('OTHER-5OFF').waitFor();
    expect(await page.getByRole('button', { name: 'Rollback' }).count()).toBe(0);
    await shot('viewer-redemptions');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    expect(await page.getByRole('button', { name: 'New endpoint' }).count()).toBe(0);
    await page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('link', { name: receiver.url }).click();
    await page.getByRole('table', { name: 'Deliveries' }).getByText('customer.created').first().waitFor();
    expect(await page.getByRole('button', { name: 'Replay' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Rotate secret' }).count()).toBe(0);
    await shot('viewer-webhook-endpoint');
    await page.goto(`${service.baseUrl}/dashboard/#/vouchers/GIFT-50`);
    await page.getByRole('table', { name: 'Gift card ledger' }).waitFor();
    expect(await page.getByRole('button', { name: /^(Disable|Enable)$/ }).count()).toBe(0);
    await signOut();
  }, 60_000);
});
