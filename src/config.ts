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

/** One duration such as 30s, 15m or 2h, in milliseconds. */
const duration = durationList.refine((list) => list.length === 1, 'must be one duration such as 30m or 2h').transform((list) => list[0]!);

/** A streamed import body (POST /vouchers/import, /customers/import) is at most this large unless IMPORT_MAX_BYTES says. */
export const IMPORT_MAX_BYTES_DEFAULT = 1_073_741_824;

/** Audit entries older than this many days are pruned by the worker. */
export const AUDIT_RETENTION_DAYS_DEFAULT = 365;

/** Events and their webhook deliveries older than this are pruned by the worker (CONTRACT.md: 90 days). */
export const EVENT_RETENTION_DEFAULT_MS = 90 * 86_400_000;

/** Requests per second, or 0 / `off` for no limit. */
const requestRate = z
  .string()
  .regex(/^(off|\d+)$/, 'must be a whole number of requests per second, or 0 / off to disable')
  .transform((value) => (value === 'off' ? 0 : Number(value)))
  .pipe(z.number().max(1_000_000, 'must be at most 1000000 requests per second'));

export interface RateLimitConfig {
  requestsPerSecond: number;
  burst: number;
}

/**
 * Server defaults of the token buckets: per API key (when neither the key nor its workspace sets one), generous
 * enough that `npm run bench` (50 connections on one key, up to ~12,000 req/s on 2 cores) is never limited; per client
 * address for requests without a valid key (key guessing, floods).
 */
export const RATE_LIMIT_DEFAULTS = Object.freeze({
  perKey: Object.freeze({ requestsPerSecond: 50_000, burst: 50_000 }),
  perAddress: Object.freeze({ requestsPerSecond: 20, burst: 100 }),
});

const postgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\/.+/, 'must be a postgres:// or postgresql:// connection string');

const EnvSchema = z.object({
  DATABASE_URL: postgresUrl.optional(),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: port.default(3000),
  WORKER_HEALTH_PORT: port.default(3001),
  // Per web process; by default one per two cores of its share (defaultPartitions).
  PARTITIONS: positiveInt.max(256).optional(),
  WEB_PROCESSES: positiveInt.max(64).default(os.availableParallelism()),
  PARTITION_LEASE_MS: positiveInt.min(1_000).max(600_000).default(5_000),
  ENGINE_HOST: z.string().min(1).default('127.0.0.1'),
  ENGINE_PORT: port.default(0),
  ENGINE_ADVERTISE_HOST: z.string().min(1).optional(),
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
  IMPORT_MAX_BYTES: positiveInt.default(IMPORT_MAX_BYTES_DEFAULT),
  DATA_DIR: z.string().min(1).default('.data'),
  EMBEDDED_PG_PORT: port.optional(),
  DB_POOL_SIZE: positiveInt.max(1000).default(20),
  START_WORKER: booleanFlag.default(true),
  ENGINE_CACHE_SIZE: positiveInt.max(50_000_000).default(200_000),
  ENGINE_CACHE_TTL_MS: positiveInt.default(30_000),
  ENGINE_MAX_BATCH: positiveInt.max(10_000).default(500),
  ENGINE_BATCHES_IN_FLIGHT: positiveInt.max(16).default(1),
  HOT_PATH_DISPATCHER: booleanFlag.default(true),
  INSIGHTS_ROLLUP: booleanFlag.default(true),
  AUDIT_RETENTION_DAYS: positiveInt.max(36_500).default(AUDIT_RETENTION_DAYS_DEFAULT),
  EVENT_RETENTION: duration.refine((ms) => ms >= 60_000 && ms <= 36_500 * 86_400_000, 'must be between 1m and 36500d').default(EVENT_RETENTION_DEFAULT_MS),
  LOYALTY_JOBS_INTERVAL: duration.refine((ms) => ms >= 1_000 && ms <= 86_400_000, 'must be between 1s and 24h').default(60_000),
  RATE_LIMIT_PER_KEY: requestRate.optional(),
  RATE_LIMIT_BURST_PER_KEY: positiveInt.max(10_000_000).optional(),
  RATE_LIMIT_PER_ADDRESS: requestRate.optional(),
  RATE_LIMIT_BURST_PER_ADDRESS: positiveInt.max(10_000_000).optional(),
  RATE_LIMIT_PROCESSES: positiveInt.max(1_000).default(1),
  PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  TRUST_PROXY: booleanFlag.default(false),
  BOOTSTRAP_ADMIN_EMAIL: z.email({ error: 'must be an email address' }).optional(),
  BOOTSTRAP_ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters').max(1024).optional(),
  STAFF_SESSION_IDLE_TIMEOUT: duration.default(2 * 3_600_000),
  STAFF_SESSION_MAX_AGE: duration.default(12 * 3_600_000),
  STAFF_INVITATION_TTL: duration.default(7 * 86_400_000),
  SIGN_IN_MAX_FAILURES_PER_EMAIL: positiveInt.max(1_000).default(5),
  SIGN_IN_MAX_FAILURES_PER_ADDRESS: positiveInt.max(100_000).default(20),
  SIGN_IN_THROTTLE_WINDOW: duration.default(15 * 60_000),
  METRICS: z.stringbool({ truthy: ['on', 'true', '1', 'yes'], falsy: ['off', 'false', '0', 'no'], error: 'must be on or off' }).default(true),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').max(1024).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).default('promotions-service'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number({ error: 'must be a number from 0 to 1' }).min(0, 'must be from 0 to 1').max(1, 'must be from 0 to 1').default(1),
});

export type Config = Readonly<{
  databaseUrl: string | undefined;
  host: string;
  port: number;
  workerHealthPort: number;
  partitions: number;
  /** Web processes on this machine (node:cluster sharing the port); each leases its share of the partition slots. */
  webProcesses: number;
  /** A partition lease lasts this long unless renewed: a killed process's slots move after at most this. */
  partitionLeaseMs: number;
  /** Where this process answers partition calls forwarded by the others (port 0: any free one). */
  engineLink: { host: string; port: number; advertiseHost: string | undefined };
  logLevel: (typeof LOG_LEVELS)[number];
  secretKey: string | undefined;
  bootstrapApiKey: string | undefined;
  webhookRetryScheduleMs: readonly number[];
  webhookTimeoutMs: number;
  webhookAllowPrivateTargets: boolean;
  maxBodyBytes: number;
  /** Streamed bulk-import bodies (CSV, NDJSON) are refused with 413 past this size. */
  importMaxBytes: number;
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
  /** The engine adds every batch's figures to the insights rollup in its commit statement (off: for bench comparisons). */
  insightsRollup: boolean;
  /** Audit entries older than this are deleted by the worker's retention job. */
  auditRetentionDays: number;
  /** Events (with their webhook deliveries) older than this are deleted by the worker's retention job. */
  eventRetentionMs: number;
  /** How often the worker activates pending loyalty points and expires due ones. */
  loyaltyJobsIntervalMs: number;
  /** Token buckets per API key and per client address (undefined: off); each web process enforces 1/processes. */
  rateLimits: RateLimits;
  /** The dashboard's own origin (cookie-authenticated writes must come from it); https makes the cookie Secure. */
  publicUrl: string | undefined;
  /** Behind a reverse proxy: the client address is the last X-Forwarded-For entry. */
  trustProxy: boolean;
  bootstrapAdminEmail: string | undefined;
  bootstrapAdminPassword: string | undefined;
  staffSessionIdleMs: number;
  staffSessionMaxAgeMs: number;
  staffInvitationTtlMs: number;
  signInMaxFailuresPerEmail: number;
  signInMaxFailuresPerAddress: number;
  signInThrottleWindowMs: number;
  /** GET /metrics on the web port and the worker's health port (off: nothing measured), behind a Bearer token when set. */
  metrics: { enabled: boolean; token: string | undefined };
  /** Traces to an OTLP/HTTP collector when an endpoint is set; `ratio` of new traces recorded. */
  tracing: { endpoint: string | undefined; serviceName: string; ratio: number };
}>;

export class ConfigError extends Error {}

/** Never echoed back, not even in a configuration error. */
const SECRET_VARIABLES: ReadonlySet<string> = new Set(['DATABASE_URL', 'SECRET_KEY', 'BOOTSTRAP_API_KEY', 'BOOTSTRAP_ADMIN_PASSWORD', 'METRICS_TOKEN']);

/** Empty strings count as unset, so `PORT= npm start` means the default. */
function withoutEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')) as Record<
    string,
    string
  >;
}

export interface RateLimits {
  perKey: RateLimitConfig | undefined;
  perAddress: RateLimitConfig | undefined;
  /** Web processes sharing the traffic: the limits are per process, so each enforces this share of them. */
  processes: number;
}

const RATE_LIMIT_VARIABLES = {
  RATE_LIMIT_PER_KEY: true,
  RATE_LIMIT_BURST_PER_KEY: true,
  RATE_LIMIT_PER_ADDRESS: true,
  RATE_LIMIT_BURST_PER_ADDRESS: true,
  RATE_LIMIT_PROCESSES: true,
} as const;

function rateLimitsOf(e: Pick<z.infer<typeof EnvSchema>, keyof typeof RATE_LIMIT_VARIABLES>): RateLimits {
  const limit = (rate: number | undefined, burst: number | undefined, fallback: RateLimitConfig) => {
    if (rate === 0) return undefined;
    if (rate === undefined) return { requestsPerSecond: fallback.requestsPerSecond, burst: burst ?? fallback.burst };
    return { requestsPerSecond: rate, burst: burst ?? rate };
  };
  return Object.freeze({
    perKey: limit(e.RATE_LIMIT_PER_KEY, e.RATE_LIMIT_BURST_PER_KEY, RATE_LIMIT_DEFAULTS.perKey),
    perAddress: limit(e.RATE_LIMIT_PER_ADDRESS, e.RATE_LIMIT_BURST_PER_ADDRESS, RATE_LIMIT_DEFAULTS.perAddress),
    processes: e.RATE_LIMIT_PROCESSES,
  });
}

/** The RATE_LIMIT_* part of the environment alone (for a composition that was handed no rate limits). */
export function rateLimitsFromEnvironment(env: NodeJS.ProcessEnv = process.env): RateLimits {
  const only = Object.fromEntries(Object.entries(withoutEmpty(env)).filter(([name]) => name.startsWith('RATE_LIMIT_')));
  const parsed = EnvSchema.pick(RATE_LIMIT_VARIABLES).safeParse(only);
  if (!parsed.success) throw new ConfigError(`Invalid configuration: ${String(parsed.error.issues[0]?.path[0])} ${parsed.error.issues[0]?.message}`);
  return rateLimitsOf(parsed.data);
}

/**
 * Partition threads per web process when PARTITIONS is unset: one per two cores of the process's share, at least one.
 * A partition keeps one batch at a time in PostgreSQL and the web thread takes a core of its own, so more threads than
 * that only halve the batches and crowd the cores: on 2 cores shared with PostgreSQL and a load generator, one thread
 * redeemed over 10,000 codes 1.3–1.5x as fast as two in the bench; hot codes about alike, the 3-voucher
 * stack ~5 % slower (README, "Benchmarks").
 */
export function defaultPartitions(cores: number, webProcesses: number): number {
  return Math.max(1, Math.floor(cores / webProcesses / 2));
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
    partitions: e.PARTITIONS ?? defaultPartitions(os.availableParallelism(), e.WEB_PROCESSES),
    webProcesses: e.WEB_PROCESSES,
    partitionLeaseMs: e.PARTITION_LEASE_MS,
    engineLink: { host: e.ENGINE_HOST, port: e.ENGINE_PORT, advertiseHost: e.ENGINE_ADVERTISE_HOST },
    logLevel: e.LOG_LEVEL,
    secretKey: e.SECRET_KEY,
    bootstrapApiKey: e.BOOTSTRAP_API_KEY,
    webhookRetryScheduleMs: Object.freeze(e.WEBHOOK_RETRY_SCHEDULE),
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookAllowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    maxBodyBytes: e.MAX_BODY_BYTES,
    importMaxBytes: e.IMPORT_MAX_BYTES,
    dataDir: path.resolve(e.DATA_DIR),
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    dbPoolSize: e.DB_POOL_SIZE,
    startWorker: e.START_WORKER,
    engineCacheSize: e.ENGINE_CACHE_SIZE,
    engineCacheTtlMs: e.ENGINE_CACHE_TTL_MS,
    engineMaxBatch: e.ENGINE_MAX_BATCH,
    engineBatchesInFlight: e.ENGINE_BATCHES_IN_FLIGHT,
    hotPathDispatcher: e.HOT_PATH_DISPATCHER,
    insightsRollup: e.INSIGHTS_ROLLUP,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    eventRetentionMs: e.EVENT_RETENTION,
    loyaltyJobsIntervalMs: e.LOYALTY_JOBS_INTERVAL,
    rateLimits: rateLimitsOf(e),
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    trustProxy: e.TRUST_PROXY,
    bootstrapAdminEmail: e.BOOTSTRAP_ADMIN_EMAIL?.toLowerCase(),
    bootstrapAdminPassword: e.BOOTSTRAP_ADMIN_PASSWORD,
    staffSessionIdleMs: e.STAFF_SESSION_IDLE_TIMEOUT,
    staffSessionMaxAgeMs: e.STAFF_SESSION_MAX_AGE,
    staffInvitationTtlMs: e.STAFF_INVITATION_TTL,
    signInMaxFailuresPerEmail: e.SIGN_IN_MAX_FAILURES_PER_EMAIL,
    signInMaxFailuresPerAddress: e.SIGN_IN_MAX_FAILURES_PER_ADDRESS,
    signInThrottleWindowMs: e.SIGN_IN_THROTTLE_WINDOW,
    metrics: { enabled: e.METRICS, token: e.METRICS_TOKEN },
    tracing: { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME, ratio: e.OTEL_TRACES_SAMPLER_ARG },
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
