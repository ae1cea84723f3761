import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, defaultPartitions, loadConfig, parseDurationList } from '../../src/config.js';

describe('configuration from the environment', () => {
  it('applies the contract defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      workerHealthPort: 3001,
      databaseUrl: undefined,
      webhookTimeoutMs: 10_000,
      webhookAllowPrivateTargets: false,
      maxBodyBytes: 1_048_576,
      logLevel: 'info',
      auditRetentionDays: 365,
      eventRetentionMs: 90 * 86_400_000,
    });
    expect(config.webhookRetryScheduleMs).toEqual([60_000, 300_000, 1_800_000, 7_200_000, 43_200_000, 86_400_000]);
    expect(config.partitions).toBeGreaterThanOrEqual(1);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('gives each web process one partition thread per two cores of its share, at least one', () => {
    // Two cores and one web process: one thread (two measured slower there, the web thread needing a core of its own).
    expect(defaultPartitions(2, 1)).toBe(1);
    expect(defaultPartitions(8, 1)).toBe(4);
    expect(defaultPartitions(16, 2)).toBe(4);
    expect(defaultPartitions(8, 8)).toBe(1);
    expect(defaultPartitions(1, 1)).toBe(1);
    expect(loadConfig({ WEB_PROCESSES: '1' }).partitions).toBe(defaultPartitions(os.availableParallelism(), 1));
  });

  it('parses given values and treats empty strings as unset', () => {
    const config = loadConfig({ PORT: '8080', PARTITIONS: '4', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '1s,2s', LOG_LEVEL: '', AUDIT_RETENTION_DAYS: '30', EVENT_RETENTION: '36h' });
    expect(config).toMatchObject({ port: 8080, partitions: 4, webhookAllowPrivateTargets: true, logLevel: 'info', auditRetentionDays: 30, eventRetentionMs: 36 * 3_600_000 });
    expect(config.webhookRetryScheduleMs).toEqual([1000, 2000]);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PARTITIONS', '0'],
    ['LOG_LEVEL', 'loud'],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'maybe'],
    ['WEBHOOK_RETRY_SCHEDULE', '1m,soon'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['MAX_BODY_BYTES', '-1'],
    ['AUDIT_RETENTION_DAYS', '0'],
    ['AUDIT_RETENTION_DAYS', '1.5'],
    ['AUDIT_RETENTION_DAYS', 'forever'],
    ['EVENT_RETENTION', '90'],
    ['EVENT_RETENTION', '30s'],
    ['EVENT_RETENTION', '1d,2d'],
  ])('refuses %s=%s with an error naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
  });

  it('never echoes a secret variable in its error', () => {
    const secret = 'service_short_key';
    expect(() => loadConfig({ BOOTSTRAP_API_KEY: secret })).toThrow(/BOOTSTRAP_API_KEY/);
    try {
      loadConfig({ BOOTSTRAP_API_KEY: secret });
    } catch (error) {
      expect((error as Error).message).not.toContain(secret);
    }
  });

  it('turns metrics on by default, off with METRICS=off, and tracing on only with an OTLP endpoint', () => {
    expect(loadConfig({})).toMatchObject({ metrics: { enabled: true, token: undefined }, tracing: { endpoint: undefined, serviceName: 'promotions-service', ratio: 1 } });
    expect(loadConfig({ METRICS: 'off' }).metrics.enabled).toBe(false);
    const token = 'm'.repeat(20);
    expect(loadConfig({ METRICS_TOKEN: token, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_SAMPLER_ARG: '0.1' })).toMatchObject({
      metrics: { enabled: true, token },
      tracing: { endpoint: 'http://127.0.0.1:4318', ratio: 0.1 },
    });
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/^Invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT /);
    expect(() => loadConfig({ METRICS: 'sometimes' })).toThrow(/^Invalid configuration: METRICS must be on or off/);
    const short = 'tooshort';
    expect(() => loadConfig({ METRICS_TOKEN: short })).toThrow(/^Invalid configuration: METRICS_TOKEN must be at least 16 characters$/);
  });

  it('parses duration lists', () => {
    expect(parseDurationList('500ms, 30s,5m,2h,1d')).toEqual([500, 30_000, 300_000, 7_200_000, 86_400_000]);
    expect(() => parseDurationList('5 minutes')).toThrow(/not a duration/);
  });

  it('stops the process with one clear line, not a stack', () => {
    const run = spawnSync(process.execPath, ['dist/src/main.js'], { env: { ...process.env, PORT: 'abc' }, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual(['Invalid configuration: PORT must be a port number (got "abc")']);
  });
});
