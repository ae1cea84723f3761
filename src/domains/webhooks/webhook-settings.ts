// What the webhooks domain needs from the configuration, set once per process by its composition root
// (main.ts, the worker, a test). Handlers reach it here because ServiceDeps carries no configuration.
import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.js';
import { deriveKey } from '../../platform/secret-key.js';

export interface WebhookSettings {
  /** AES-256-GCM key sealing the signing secrets at rest. */
  secretsKey: Buffer;
  allowPrivateTargets: boolean;
  timeoutMs: number;
  retryScheduleMs: readonly number[];
}

export function webhookSettingsFrom(config: Config, secretKey: string): WebhookSettings {
  return Object.freeze({
    secretsKey: deriveKey(secretKey, 'webhook-secrets'),
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    timeoutMs: config.webhookTimeoutMs,
    retryScheduleMs: config.webhookRetryScheduleMs,
  });
}

// Unconfigured (an app assembled without a composition root, e.g. a fuzz test): a process-local key, private
// targets refused. Secrets sealed with it open only in this process.
let current: WebhookSettings = Object.freeze({
  secretsKey: randomBytes(32),
  allowPrivateTargets: false,
  timeoutMs: 10_000,
  retryScheduleMs: [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000, 86_400_000],
});

export function configureWebhooks(settings: WebhookSettings): void {
  current = settings;
}

export function webhookSettings(): WebhookSettings {
  return current;
}
