// The composition root of every process role: the web process (main.ts through web-service.ts), the background worker
// (workers/background.ts through jobs/background-worker.ts), the CLI and start-up's seeds (operator face). Settings are
// built here once from the Config; the handlers' dependencies, caches included, once per service. Below this file
// nothing holds a setting or a cache at module level: each is an instance made here and passed in.
import type { Config } from './config.js';
import type { RedemptionEngine } from './contract/engine-port.js';
import type { ServiceDeps } from './contract/handler.js';
import type { ServiceSettings, WebhookSettings } from './contract/service-settings.js';
import { InsightCache } from './domains/insights/index.js';
import { qualificationIndexes } from './domains/promotions/index.js';
import { checkoutCustomers, workspaceStackLimits } from './domains/redemptions/index.js';
import { DEFAULT_STAFF_SETTINGS, staffSettingsFrom, staffSettingsOf, type StaffSettingsInput } from './domains/staff/index.js';
import { localWebhookSettings, webhookSettingsFrom } from './domains/webhooks/index.js';
import type { CursorCodec } from './platform/cursor.js';
import type { Pool } from './platform/database.js';
import type { Logger } from './platform/logger.js';
import { resolveSecretKey } from './platform/secret-key.js';

/** The settings of this process's services, from the configuration (the secret key read or made under DATA_DIR). */
export async function serviceSettingsFrom(config: Config, staff: Partial<StaffSettingsInput> = {}): Promise<ServiceSettings> {
  const secretKey = await resolveSecretKey(config.secretKey, config.dataDir);
  return { staff: staffSettingsOf({ ...staffSettingsFrom(config), ...staff }), webhooks: webhookSettingsFrom(config, secretKey) };
}

/** Settings without a configuration (a service a test assembles): the defaults, a webhook key of this process's own. */
export function defaultServiceSettings(change: { staff?: Partial<StaffSettingsInput>; webhooks?: Partial<WebhookSettings> } = {}): ServiceSettings {
  const throttle = { ...DEFAULT_STAFF_SETTINGS.throttle, ...change.staff?.throttle };
  return { staff: staffSettingsOf({ ...DEFAULT_STAFF_SETTINGS, ...change.staff, throttle }), webhooks: localWebhookSettings(change.webhooks) };
}

export interface ServiceParts {
  db: Pool;
  log: Logger;
  cursors: CursorCodec;
  engine: RedemptionEngine;
  settings: ServiceSettings;
  /** Empties this process's API-key cache (none: a process without one). */
  forgetApiKeys?: () => void;
}

/** What every handler of one service receives: its parts, and the caches this service keeps (one of each per service). */
export function serviceDeps(parts: ServiceParts): ServiceDeps {
  return {
    db: parts.db,
    cursors: parts.cursors,
    log: parts.log,
    engine: parts.engine,
    forgetApiKeys: parts.forgetApiKeys ?? (() => undefined),
    settings: parts.settings,
    insightCache: new InsightCache(),
    customers: checkoutCustomers(parts.db),
    stackLimits: workspaceStackLimits(parts.db),
    tierIndexes: qualificationIndexes(parts.engine),
  };
}
