// The dashboard's browser tests share this: the system's Chromium (/usr/bin/chromium, headless, through playwright-core,
// never a downloaded browser) in a throwaway profile, signing in and out, and full-page screenshots.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { projectRoot } from '../../src/platform/paths.js';
import { defaultServiceSettings } from '../../src/composition.js';
import { createLogger } from '../../src/platform/logger.js';
import { seedBootstrapOwner } from '../../src/runtime.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { useStaffSettings } from '../staff/staff-support.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const SHOTS = path.join(projectRoot, 'test-results', 'dashboard');
export const DOCS = path.join(projectRoot, 'docs');

export interface DashboardBrowser {
  context: BrowserContext;
  page: Page;
  /** A full-page screenshot into test-results/dashboard/, and into docs/ too when `docs` names the file there. */
  shot(name: string, docs?: string): Promise<void>;
  signIn(baseUrl: string, email: string, password: string): Promise<void>;
  signOut(): Promise<void>;
  close(): Promise<void>;
}

export async function openDashboardBrowser(): Promise<DashboardBrowser> {
  if (!existsSync(path.join(projectRoot, 'dist', 'dashboard', 'index.html'))) throw new Error('the dashboard is not built: run npm run build');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  await mkdir(SHOTS, { recursive: true });
  const profile = await mkdtemp(path.join(tmpdir(), 'dashboard-e2e-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 800 } });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('dialog', (dialog) => void dialog.accept());
  return {
    context,
    page,
    async shot(name, docs) {
      // From the top, as a reader opens the page: a full-page shot of a page scrolled down (a form submitted at its
      // foot) drew the sticky sidebar where the window stood, below a gap.
      await page.evaluate('window.scrollTo(0, 0)');
      await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
      if (docs) await page.screenshot({ path: path.join(DOCS, docs), fullPage: true });
    },
    async signIn(baseUrl, email, password) {
      await page.goto(`${baseUrl}/dashboard/`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
    },
    async signOut() {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** A service with staff settings and a new workspace whose owner (`owner`) can sign in to the dashboard. */
export async function serviceWithOwner(owner: { email: string; password: string }): Promise<{ service: TestService; api: ApiClient; workspaceId: string }> {
  const service = await startTestService();
  useStaffSettings(service);
  const { api, workspaceId } = await service.newWorkspace();
  await seedBootstrapOwner(service.pool, createLogger('silent'), defaultServiceSettings(), workspaceId, owner.email, owner.password);
  return { service, api, workspaceId };
}
