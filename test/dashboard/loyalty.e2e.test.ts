// The dashboard's Loyalty page and the loyalty figures of Insights in real Chromium, against the real service and
// PostgreSQL: programs, a program's members (balance, pending, tier, lifetime), a member's ledger, points adjusted from
// the page (and refused when the balance does not cover them), the points-per-day chart and members per tier, and a
// viewer who sees all of it but cannot adjust. Screenshots go to test-results/dashboard/ and the README's to docs/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/platform/logger.js';
import { seedBootstrapOwner } from '../../src/runtime.js';
import { defaultServiceSettings } from '../../src/composition.js';
import { sweepPoints } from '../../src/domains/loyalty/index.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { addPoints, makeDue } from '../loyalty/support.js';
import { PASSWORD, staffUser, useStaffSettings } from '../staff/staff-support.js';
import { openDashboardBrowser, type DashboardBrowser } from './browser.js';

const OWNER = { email: 'loyalty-owner@example.com', password: 'the owner password' };

let service: TestService;
let browser: DashboardBrowser;
let api: ApiClient;
let key: string;
let program: { id: string };
let ada: { id: string; code: string };

beforeAll(async () => {
  service = await startTestService();
  useStaffSettings(service);
  const workspace = await service.newWorkspace();
  ({ api, key } = workspace);
  await seedBootstrapOwner(service.pool, createLogger('silent'), defaultServiceSettings(), workspace.workspaceId, OWNER.email, OWNER.password);

  // A program with two tiers; Ada earns 150 by a review (Gold) and pays 40 points at checkout; Bo has 30 points,
  // 20 more pending, and 15 that expired; Cy has joined and holds nothing.
  program = await api.create('/api/v1/campaigns', { name: 'Dash Club', type: 'LOYALTY_PROGRAM', currency: 'EUR', loyalty: { payWithPoints: { pointValue: { points: 1, amount: 1 } } } });
  await api.create(`/api/v1/loyalty/programs/${program.id}/tiers`, { name: 'Silver', minPoints: 50 });
  await api.create(`/api/v1/loyalty/programs/${program.id}/tiers`, { name: 'Gold', minPoints: 100, multiplier: 1.5 });
  await api.create(`/api/v1/loyalty/programs/${program.id}/earning-rules`, { name: 'review', trigger: 'CUSTOM_EVENT', eventName: 'review', points: { type: 'FIXED', points: 150 } });
  ada = await api.create(`/api/v1/loyalty/programs/${program.id}/members`, { customer: { sourceId: 'dash-ada', name: 'Ada' }, code: 'CARD-ADA' });
  const bo = await api.create<{ id: string }>(`/api/v1/loyalty/programs/${program.id}/members`, { customer: { sourceId: 'dash-bo' }, code: 'CARD-BO' });
  await api.create(`/api/v1/loyalty/programs/${program.id}/members`, { customer: { sourceId: 'dash-cy' }, code: 'CARD-CY' });
  expect((await api.post('/api/v1/custom-events', { name: 'review', customer: { sourceId: 'dash-ada' } })).status).toBe(200);
  expect((await api.post('/api/v1/vouchers/CARD-ADA/redemption', { order: { amount: 40, currency: 'EUR' } })).body).toMatchObject({ ok: true });
  await addPoints(api, bo.id, 15, { expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
  await makeDue(service.pool, bo.id, 'expires_at');
  await sweepPoints(service.pool);
  await addPoints(api, bo.id, 30, { reason: 'welcome' });
  await addPoints(api, bo.id, 20, { activatesAt: new Date(Date.now() + 7 * 86_400_000).toISOString() });

  browser = await openDashboardBrowser();
  await browser.signIn(service.baseUrl, OWNER.email, OWNER.password);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

const rowTexts = async (label: string) => (await browser.page.getByRole('table', { name: label }).getByRole('row').allTextContents()).slice(1);

describe('the Loyalty page in Chromium', () => {
  it("lists the programs and a program's members with balance, pending, tier and lifetime points", async () => {
    const { page } = browser;
    await page.getByRole('link', { name: 'Loyalty', exact: true }).click();
    await page.getByRole('table', { name: 'Loyalty programs' }).getByRole('link', { name: 'Dash Club' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dash Club' }).waitFor();
    await page.getByRole('table', { name: 'Members' }).getByText('CARD-CY').waitFor();
    // Newest first: Cy, Bo, Ada. Columns: card, balance, pending, lifetime, tier, since.
    const rows = await rowTexts('Members');
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(/^CARD-CY000—/);
    expect(rows[1]).toMatch(/^CARD-BO30200—/);
    expect(rows[2]).toMatch(/^CARD-ADA1100150Gold/);
    expect(await page.getByLabel('Tiers').textContent()).toMatch(/Silver.*from 50 pts.*Gold.*from 100 pts, ×1\.5/);
    expect(await page.getByRole('alert').count()).toBe(0);
    await browser.shot('loyalty-program', 'dashboard-loyalty-program.png');
  }, 60_000);

  it("shows a member's ledger and adjusts points from the page, once per submission", async () => {
    const { page } = browser;
    await page.getByRole('table', { name: 'Members' }).getByRole('link', { name: 'CARD-ADA' }).click();
    await page.getByRole('heading', { level: 1, name: 'Card CARD-ADA' }).waitFor();
    await page.getByRole('table', { name: 'Ledger' }).getByText('REDEMPTION', { exact: true }).waitFor();
    expect(await rowTexts('Ledger')).toEqual([expect.stringMatching(/^REDEMPTION-40110/), expect.stringMatching(/^POINTS_EARNED\+150150/)]);
    await page.getByLabel('Points', { exact: true }).fill('25');
    await page.getByLabel('Reason').fill('service recovery');
    await page.getByRole('button', { name: 'Adjust points' }).click();
    await page.getByRole('status').filter({ hasText: 'the balance is 135 points' }).waitFor();
    await page.getByRole('table', { name: 'Ledger' }).getByText('service recovery').waitFor();
    expect((await rowTexts('Ledger'))[0]).toMatch(/^ADJUSTMENT\+25135service recovery/);
    // The member's figures and the ledger are read again side by side: either may show first.
    await expect.poll(() => page.getByLabel('Member').textContent()).toContain('Balance135 pts');
    const member = await api.get(`/api/v1/loyalty/members/${ada.id}`);
    expect(member.body).toMatchObject({ balance: 135, lifetimeEarned: 150, tier: { name: 'Gold' } });
    await browser.shot('loyalty-member', 'dashboard-loyalty.png');
  }, 60_000);

  it('shows a refusal when the balance does not cover the points, and refuses what is not a whole number before sending it', async () => {
    const { page } = browser;
    await page.getByLabel('Points', { exact: true }).fill('-1000');
    await page.getByRole('button', { name: 'Adjust points' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/135/);
    await page.getByLabel('Points', { exact: true }).fill('2.5');
    await page.getByRole('button', { name: 'Adjust points' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('a whole number other than 0');
    await page.getByLabel('Points', { exact: true }).fill('0');
    await page.getByRole('button', { name: 'Adjust points' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('a whole number other than 0');
    const entries = await api.get(`/api/v1/loyalty/members/${ada.id}/transactions`);
    expect(entries.body.data.map((e: any) => e.type)).toEqual(['ADJUSTMENT', 'REDEMPTION', 'POINTS_EARNED']);
    expect((await api.get(`/api/v1/loyalty/members/${ada.id}`)).body.balance).toBe(135);
    await browser.shot('loyalty-member-refused');
  }, 60_000);

  it('charts the points per day with their totals, and the members per tier, on Insights', async () => {
    const { page } = browser;
    await page.getByRole('link', { name: 'Insights' }).click();
    const totals = page.getByLabel('Points moved');
    await totals.waitFor();
    // earned 150; spent 40; expired 15; adjusted 15 + 30 + 20 + 25 = 90; now: 3 members hold 135 + 30, 20 pending.
    expect(await totals.textContent()).toBe('150earned, last 30 days40spent15expired0reversed0refunded+90adjusted (net)');
    await page.getByRole('img', { name: 'Loyalty points per day' }).locator('canvas').waitFor();
    expect(await page.getByLabel('Loyalty now').textContent()).toBe('3members165points held20points pending');
    const tiers = page.getByRole('region', { name: 'Members per tier' });
    expect(await tiers.textContent()).toBe('Members per tier3members165points held20points pendingNo tier2Silver0Gold1');
    expect(await page.getByRole('alert').count()).toBe(0);
    await browser.shot('insights-loyalty', 'dashboard-insights-loyalty.png');
  }, 60_000);

  it('lets a viewer read programs, members and ledgers but not adjust, and the server refuses it anyway', async () => {
    const { page } = browser;
    await browser.signOut();
    const viewer = await staffUser(service, key, 'viewer');
    await browser.signIn(service.baseUrl, viewer.email, PASSWORD);
    await page.goto(`${service.baseUrl}/dashboard/#/loyalty/members/${ada.id}`);
    await page.getByRole('table', { name: 'Ledger' }).getByText('service recovery').waitFor();
    expect(await page.getByRole('form', { name: 'Adjust points' }).count()).toBe(0);
    const status = await page.evaluate(async (id) => {
      const res = await fetch('/api/rpc/loyalty.adjustPoints', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, points: 1000 }) });
      return res.status;
    }, ada.id);
    expect(status).toBe(403);
    expect((await api.get(`/api/v1/loyalty/members/${ada.id}`)).body.balance).toBe(135);
    await browser.shot('viewer-loyalty-member');
  }, 60_000);
});
