// What the webhooks domain reads of the configuration: built once per process at the composition root and passed in
// (ServiceDeps.settings for handlers, the background jobs' options for delivery).
import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.js';
import type { WebhookSettings } from '../../contract/service-settings.js';
import { deriveKey } from '../../platform/secret-key.js';

export function webhookSettingsFrom(config: Config, secretKey: string): WebhookSettings {
  return Object.freeze({
    secretsKey: deriveKey(secretKey, 'webhook-secrets'),
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    timeoutMs: config.webhookTimeoutMs,
    retryScheduleMs: config.webhookRetryScheduleMs,
  });
}

/**
 * For a service assembled without a configuration (a test that sets no policy): a key of its own, private targets
 * refused. Secrets sealed with it open only in this service.
 */
export function localWebhookSettings(change: Partial<WebhookSettings> = {}): WebhookSettings {
  return Object.freeze({
    secretsKey: randomBytes(32),
    allowPrivateTargets: false,
    timeoutMs: 10_000,
    retryScheduleMs: [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000, 86_400_000],
    ...change,
  });
}
