// What the worker process runs on pg-boss: the webhook delivery pipeline, the loyalty and referral subscribers and the
// points sweep, and the scheduled pruning of expired idempotency keys and audit entries. Also started in-process by
// tests.
import type { Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';
import { packageVersion } from '../platform/paths.js';
import {
  attemptExpirySeconds,
  startWebhookDelivery,
  webhookDeliveryQueue,
  type DeliveryLimits,
  type DeliveryObserver,
  type WebhookSettings,
} from '../domains/webhooks/index.js';
import { startIdempotencyKeyPruning } from '../domains/redemptions/index.js';
import { startAuditRetention } from '../domains/audit/index.js';
import { loyaltyPointsQueue, startLoyaltyJobs, type LoyaltyJobSettings } from '../domains/loyalty/index.js';
import { startReferralJobs } from '../domains/referrals/index.js';
import { AUDIT_RETENTION_DAYS_DEFAULT } from '../config.js';
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
  loyalty?: Partial<LoyaltyJobSettings>;
  /** Told of every webhook attempt's outcome (the worker's metrics). */
  deliveryObserver?: DeliveryObserver | undefined;
}): Promise<BackgroundJobs> {
  const { pool, log, webhooks } = options;
  const expiry = attemptExpirySeconds(webhooks.timeoutMs);
  const boss = await startJobQueue(pool, log, {
    queues: [webhookDeliveryQueue(webhooks), loyaltyPointsQueue()],
    // Often enough that an attempt orphaned by a killed worker runs again soon after its expiry.
    maintenanceIntervalSeconds: Math.min(60, Math.max(1, Math.ceil(expiry / 2))),
  });
  const scheduler = createJobScheduler(boss, log.child({ component: 'scheduled-jobs' }));
  await startIdempotencyKeyPruning(scheduler, pool, log.child({ component: 'idempotency-keys' }));
  await startAuditRetention(scheduler, {
    db: pool,
    log: log.child({ component: 'audit-retention' }),
    retentionDays: options.auditRetentionDays ?? AUDIT_RETENTION_DAYS_DEFAULT,
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
  const loyalty = await startLoyaltyJobs({ boss, pool, log: log.child({ component: 'loyalty' }), ...(options.loyalty ? { settings: options.loyalty } : {}) });
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
      await boss.stop({ graceful: false, close: false });
    },
  };
}
