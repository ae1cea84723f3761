// Parses the environment once, with zod, into a frozen Config. Nothing else reads process.env.
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const port = z.coerce.number({ error: 'must be a port number' }).int('must be a port number').min(0, 'must be a port number').max(65535, 'must be a port number (0-65535)');
const positiveInt = z.coerce.number({ error: 'must be a positive whole number' }).int('must be a positive whole number').positive('must be a positive whole number');
const booleanFlag = z.stringbool({ truthy: ['true', '1', 'yes'], falsy: ['false', '0', 'no'], error: 'must be true or false' });

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "1m,5m,30m,2h" → [60000, 300000, ...] */
export function parseDurationList(value: string): number[] {
  return value.split(',').map((part) => {
    const match = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(part);
    if (!match) throw new Error(`"${part.trim()}" is not a duration such as 30s, 5m or 2h`);
    return Number(match[1]) * DURATION_UNITS_MS[match[2]!]!;
  });
}

const durationList = z.string().transform((value, ctx) => {
  try {
    const list = parseDurationList(value);
    if (list.length === 0) throw new Error('the list is empty');
    return list;
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/** Audit entries older than this many days are pruned by the worker. */
export const AUDIT_RETENTION_DAYS_DEFAULT = 365;

const postgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\/.+/, 'must be a postgres:// or postgresql:// connection string');

const EnvSchema = z.object({
  DATABASE_URL: postgresUrl.optional(),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: port.default(3000),
  WORKER_HEALTH_PORT: port.default(3001),
  PARTITIONS: positiveInt.max(256).default(os.availableParallelism()),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  BOOTSTRAP_API_KEY: z
    .string()
    .regex(/^service_[A-Za-z0-9]{12}_[A-Za-z0-9]{40}$/, 'must look like service_<12 chars>_<40 chars>')
    .optional(),
  WEBHOOK_RETRY_SCHEDULE: durationList.default(parseDurationList('1m,5m,30m,2h,12h,24h')),
  WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: booleanFlag.default(false),
  MAX_BODY_BYTES: positiveInt.default(1_048_576),
  DATA_DIR: z.string().min(1).default('.data'),
  EMBEDDED_PG_PORT: port.optional(),
  DB_POOL_SIZE: positiveInt.max(1000).default(20),
  START_WORKER: booleanFlag.default(true),
  ENGINE_CACHE_SIZE: positiveInt.max(50_000_000).default(200_000),
  ENGINE_CACHE_TTL_MS: positiveInt.default(30_000),
  ENGINE_MAX_BATCH: positiveInt.max(10_000).default(500),
  ENGINE_BATCHES_IN_FLIGHT: positiveInt.max(16).default(1),
  HOT_PATH_DISPATCHER: booleanFlag.default(true),
  AUDIT_RETENTION_DAYS: positiveInt.max(36_500).default(AUDIT_RETENTION_DAYS_DEFAULT),
});

export type Config = Readonly<{
  databaseUrl: string | undefined;
  host: string;
  port: number;
  workerHealthPort: number;
  partitions: number;
  logLevel: (typeof LOG_LEVELS)[number];
  secretKey: string | undefined;
  bootstrapApiKey: string | undefined;
  webhookRetryScheduleMs: readonly number[];
  webhookTimeoutMs: number;
  webhookAllowPrivateTargets: boolean;
  maxBodyBytes: number;
  dataDir: string;
  embeddedPgPort: number | undefined;
  dbPoolSize: number;
  startWorker: boolean;
  /** Vouchers kept in memory per partition. */
  engineCacheSize: number;
  /** A cached voucher older than this is read again (bounds staleness when another process writes). */
  engineCacheTtlMs: number;
  /** Requests decided and committed together at most. */
  engineMaxBatch: number;
  engineBatchesInFlight: number;
  /** Serve the hot routes with the lean dispatcher in front of express. */
  hotPathDispatcher: boolean;
  /** Audit entries older than this are deleted by the worker's retention job. */
  auditRetentionDays: number;
}>;

export class ConfigError extends Error {}

/** Never echoed back, not even in a configuration error. */
const SECRET_VARIABLES = new Set(['DATABASE_URL', 'SECRET_KEY', 'BOOTSTRAP_API_KEY']);

/** Empty strings count as unset, so `PORT= npm start` means the default. */
function withoutEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')) as Record<
    string,
    string
  >;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    const given = name in env && !SECRET_VARIABLES.has(name) ? ` (got ${JSON.stringify(env[name])})` : '';
    throw new ConfigError(`Invalid configuration: ${name} ${issue.message}${given}`);
  }
  const e = parsed.data;
  return Object.freeze({
    databaseUrl: e.DATABASE_URL,
    host: e.HOST,
    port: e.PORT,
    workerHealthPort: e.WORKER_HEALTH_PORT,
    partitions: e.PARTITIONS,
    logLevel: e.LOG_LEVEL,
    secretKey: e.SECRET_KEY,
    bootstrapApiKey: e.BOOTSTRAP_API_KEY,
    webhookRetryScheduleMs: Object.freeze(e.WEBHOOK_RETRY_SCHEDULE),
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookAllowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    maxBodyBytes: e.MAX_BODY_BYTES,
    dataDir: path.resolve(e.DATA_DIR),
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    dbPoolSize: e.DB_POOL_SIZE,
    startWorker: e.START_WORKER,
    engineCacheSize: e.ENGINE_CACHE_SIZE,
    engineCacheTtlMs: e.ENGINE_CACHE_TTL_MS,
    engineMaxBatch: e.ENGINE_MAX_BATCH,
    engineBatchesInFlight: e.ENGINE_BATCHES_IN_FLIGHT,
    hotPathDispatcher: e.HOT_PATH_DISPATCHER,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
  });
}

/** For entry points: a bad value ends the process with one clear line, never a stack. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
