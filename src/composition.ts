// The composition root of every process role: the web process (main.ts through web-service.ts), the background worker
// (workers/background.ts through jobs/background-worker.ts), the CLI and start-up's seeds (operator face). Settings are
// built here once from the Config; the handlers' dependencies, caches included, once per service. Below this file
// nothing holds a setting or a cache at module level: each is an instance made here and passed in.
import type { Config } from './config.js';
import type { RedemptionEngine } from './contract/engine-port.js';
import type { ServiceDeps } from './contract/handler.js';
import type { ServiceSettings, WebhookSettings } from './contract/service-settings.js';
import { ZoneCalendar } from './contract/zone-calendar.js';
import { InsightCache } from './domains/insights/index.js';
import { qualificationIndexes } from './domains/promotions/index.js';
import { checkoutCustomers, workspaceStackLimits } from './domains/redemptions/index.js';
import { DEFAULT_STAFF_SETTINGS, staffSettingsFrom, staffSettingsOf, type StaffSettingsInput } from './domains/staff/index.js';
import { localWebhookSettings, webhookSettingsFrom } from './domains/webhooks/index.js';
import type { CursorCodec } from './platform/cursor.js';
import type { Pool } from './platform/database.js';
import { KeyedQueue } from './platform/keyed-queue.js';
import { Slots } from './platform/slots.js';
import type { Logger } from './platform/logger.js';
import { resolveSecretKey } from './platform/secret-key.js';
import { startEmbeddedPostgres, type Supervision } from './platform/embedded-postgres.js';
import { createCursorCodec } from './platform/cursor.js';
import { createPool } from './platform/database.js';
import { deriveKey } from './platform/secret-key.js';

/**
 * A process's role: the web process (its handlers: every operation of the registry, through web-service.ts), the
 * primary of a cluster of web processes (it prepares the database and forks them), the background worker (pg-boss
 * jobs) or the CLI (the operator face's operations).
 */
export type ProcessRole = 'web' | 'primary' | 'worker' | 'cli';

/** Connections per role: a web process serves requests (DB_POOL_SIZE); the others need a few. */
const POOL_SIZE: Record<ProcessRole, (config: Config) => number> = {
  web: (config) => config.dbPoolSize,
  primary: () => 2,
  worker: () => 8,
  cli: () => 2,
};

export interface Composition {
  database: OpenDatabase;
  settings: ServiceSettings;
  /** List cursors signed with the secret key (the web role's; the same key in every process, so cursors survive). */
  cursors: CursorCodec;
}

/**
 * What every role starts from: the database (external, or the embedded one, supervised when asked), the settings
 * and the cursor codec, all from one Config. The caller then builds its role: startWebService (web), the forks
 * (primary), startBackgroundJobs (worker), the operator face (cli).
 */
export async function compose(config: Config, log: Logger, role: ProcessRole, options: { supervision?: Supervision; staff?: Partial<StaffSettingsInput> } = {}): Promise<Composition> {
  const database = await openDatabase(config, log, POOL_SIZE[role](config), options.supervision);
  try {
    return { database, settings: await serviceSettingsFrom(config, options.staff), cursors: await createCursors(config) };
  } catch (error) {
    await database.close();
    throw error;
  }
}

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
  /** The process's calendar, shared with the engine's web thread (none: one of the service's own). */
  calendar?: ZoneCalendar;
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
    calendar: parts.calendar ?? new ZoneCalendar(),
    rowTurns: new KeyedQueue(),
    importSlots: new Slots(Math.max(1, Math.floor((parts.db.options.max ?? 10) / 4))),
  };
}

export interface OpenDatabase {
  url: string;
  pool: Pool;
  embedded: boolean;
  /** The process is stopping: an exit of the embedded server from now on is no fault (a group signal reaches both). */
  expectStop(): void;
  close(): Promise<void>;
}

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL under DATA_DIR (started, or joined if running). With
 * `supervision`, an embedded server this process started is restarted when it exits unexpectedly.
 */
export async function openDatabase(
  config: Config,
  log: Logger,
  poolSize = config.dbPoolSize,
  supervision?: Supervision,
): Promise<OpenDatabase> {
  const embedded = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPgPort, log, supervision });
  const url = config.databaseUrl ?? embedded!.url;
  const pool = createPool(url, { max: poolSize, log });
  return {
    url,
    pool,
    embedded: embedded !== undefined,
    expectStop: () => embedded?.expectExit(),
    async close() {
      await pool.end().catch(() => undefined);
      await embedded?.stop();
    },
  };
}

export async function createCursors(config: Config): Promise<CursorCodec> {
  const secretKey = await resolveSecretKey(config.secretKey, config.dataDir);
  return createCursorCodec(deriveKey(secretKey, 'list-cursors'));
}
