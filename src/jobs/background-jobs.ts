// What the worker process runs on pg-boss: the webhook delivery pipeline, the loyalty and referral subscribers and the
// points sweep, and the scheduled pruning of expired idempotency keys, audit entries, and events with their webhook
// deliveries. Also started in-process by tests.
import type { Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';
import { packageVersion } from '../platform/paths.js';
import {
  attemptExpirySeconds,
  startEventRetention,
  startWebhookDelivery,
  webhookDeliveryQueue,
  type DeliveryLimits,
  type DeliveryObserver,
  type EventRetention,
} from '../domains/webhooks/index.js';
import type { WebhookSettings } from '../contract/service-settings.js';
import { startIdempotencyKeyPruning } from '../domains/redemptions/index.js';
import { startAuditRetention } from '../domains/audit/index.js';
import { startLoyaltyJobs, type LoyaltyJobSettings } from '../domains/loyalty/index.js';
import { startReferralJobs } from '../orchestration/index.js';
import { AUDIT_RETENTION_DAYS_DEFAULT, EVENT_RETENTION_DEFAULT_MS } from '../config.js';
import { startJobQueue } from './job-queue.js';
import { createJobScheduler } from './scheduled-jobs.js';

export interface BackgroundJobs {
  wake(): void;
  stop(): Promise<void>;
}

export async function startBackgroundJobs(options: {
  pool: Pool;
  log: Logger;
  webhooks: WebhookSettings;
  limits?: Partial<DeliveryLimits>;
  auditRetentionDays?: number;
  /** Default: EVENT_RETENTION's default, batches of EVENT_RETENTION_BATCH events. */
  eventRetention?: Partial<EventRetention>;
  loyalty?: Partial<LoyaltyJobSettings>;
  /** Told of every webhook attempt's outcome (the worker's metrics). */
  deliveryObserver?: DeliveryObserver | undefined;
}): Promise<BackgroundJobs> {
  const { pool, log, webhooks } = options;
  const expiry = attemptExpirySeconds(webhooks.timeoutMs);
  const queue = await startJobQueue(pool, log, {
    queues: [webhookDeliveryQueue(webhooks)],
    // Often enough that an attempt orphaned by a killed worker runs again soon after its expiry.
    maintenanceIntervalSeconds: Math.min(60, Math.max(1, Math.ceil(expiry / 2))),
  });
  const { boss } = queue;
  const scheduler = createJobScheduler(boss, log.child({ component: 'scheduled-jobs' }));
  await startIdempotencyKeyPruning(scheduler, pool, log.child({ component: 'idempotency-keys' }));
  await startAuditRetention(scheduler, {
    db: pool,
    log: log.child({ component: 'audit-retention' }),
    retentionDays: options.auditRetentionDays ?? AUDIT_RETENTION_DAYS_DEFAULT,
  });
  await startEventRetention(scheduler, {
    db: pool,
    log: log.child({ component: 'event-retention' }),
    retentionMs: options.eventRetention?.retentionMs ?? EVENT_RETENTION_DEFAULT_MS,
    batchSize: options.eventRetention?.batchSize,
  });
  const delivery = startWebhookDelivery({
    boss,
    pool,
    log: log.child({ component: 'webhooks' }),
    settings: webhooks,
    userAgent: `promotions-service-webhooks/${packageVersion}`,
    ...(options.limits ? { limits: options.limits } : {}),
    observer: options.deliveryObserver,
  });
  const loyalty = await startLoyaltyJobs({ pool, log: log.child({ component: 'loyalty' }), ...(options.loyalty ? { settings: options.loyalty } : {}) });
  const referrals = startReferralJobs({ pool, log: log.child({ component: 'referrals' }) });
  return {
    wake: () => {
      delivery.wake();
      loyalty.wake();
      referrals.wake();
    },
    async stop() {
      await referrals.stop();
      await loyalty.stop();
      await delivery.stop();
      await queue.stop();
    },
  };
}
