// Every domain's bound handlers, checked against the registry: one handler per operation, no strays.
import type { BoundHandler } from '../contract/handler.js';
import { operations } from '../registry.js';
import { apiKeyHandlers } from '../domains/access/index.js';
import { auditHandlers } from '../domains/audit/index.js';
import { campaignHandlers } from '../domains/campaigns/index.js';
import { customerHandlers } from '../domains/customers/index.js';
import { redemptionHandlers } from '../domains/redemptions/index.js';
import { validationRuleHandlers } from '../domains/rules/index.js';
import { segmentHandlers } from '../domains/segments/index.js';
import { staffHandlers } from '../domains/staff/index.js';
import { eventHandlers } from '../domains/events/index.js';
import { insightHandlers } from '../domains/insights/index.js';
import { promotionHandlers } from '../domains/promotions/index.js';
import { orderHandlers } from '../domains/orders/index.js';
import { publicationHandlers } from '../domains/publications/index.js';
import { voucherHandlers } from '../domains/vouchers/index.js';
import { webhookHandlers } from '../domains/webhooks/index.js';
import { loyaltyHandlers } from '../domains/loyalty/index.js';
import { referralHandlers } from '../domains/referrals/index.js';
import { rewardHandlers } from '../domains/rewards/index.js';
import { workspaceHandlers } from '../domains/workspaces/index.js';
import { importHandlers } from '../domains/imports/index.js';
import { customEventHandlers, orderReturnHandlers, orderUpdateHandlers } from '../orchestration/index.js';

export const boundHandlers: readonly BoundHandler[] = [...workspaceHandlers, ...apiKeyHandlers, ...campaignHandlers, ...voucherHandlers, ...customerHandlers, ...redemptionHandlers, ...promotionHandlers, ...webhookHandlers, ...eventHandlers, ...orderHandlers, ...orderUpdateHandlers, ...orderReturnHandlers, ...publicationHandlers, ...validationRuleHandlers, ...segmentHandlers, ...auditHandlers, ...staffHandlers, ...insightHandlers, ...loyaltyHandlers, ...customEventHandlers, ...rewardHandlers, ...referralHandlers, ...importHandlers];

export function assertEveryOperationHandled(handlers: readonly BoundHandler[] = boundHandlers): void {
  const handled = new Set(handlers.map((h) => h.operation.name));
  const missing = operations.filter((op) => !handled.has(op.name)).map((op) => op.name);
  const stray = [...handled].filter((name) => !operations.some((op) => op.name === name));
  if (missing.length || stray.length) {
    throw new Error(`operations without handler: [${missing.join(', ')}]; handlers without operation: [${stray.join(', ')}]`);
  }
}
