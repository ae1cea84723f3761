// The one list of all operations. Every face (REST, OpenAPI, RPC, client, CLI, MCP) is built from it.
import { apiKeyContract } from './domains/access/api-key.contract.js';
import { auditContract } from './domains/audit/audit.contract.js';
import { campaignContract } from './domains/campaigns/campaign.contract.js';
import { customerContract } from './domains/customers/customer.contract.js';
import { redemptionContract } from './domains/redemptions/redemption.contract.js';
import { validationRuleContract } from './domains/rules/validation-rule.contract.js';
import { segmentContract } from './domains/segments/segment.contract.js';
import { staffContract } from './domains/staff/staff.contract.js';
import { eventContract } from './domains/events/event.contract.js';
import { insightContract } from './domains/insights/insight.contract.js';
import { promotionContract } from './domains/promotions/promotion.contract.js';
import { orderContract } from './domains/orders/order.contract.js';
import { publicationContract } from './domains/publications/publication.contract.js';
import { voucherContract } from './domains/vouchers/voucher.contract.js';
import { webhookContract } from './domains/webhooks/webhook.contract.js';
import { loyaltyContract } from './domains/loyalty/loyalty.contract.js';
import { referralContract } from './domains/referrals/referral.contract.js';
import { rewardContract } from './domains/rewards/reward.contract.js';
import { workspaceContract } from './domains/workspaces/workspace.contract.js';
import { importContract } from './domains/imports/import.contract.js';
import { customEventContract } from './orchestration/custom-event.contract.js';
import { orderReturnContract } from './orchestration/order-return.contract.js';

// Not annotated as Operation[]: the element type keeps each operation's name and schemas for the typed client.
export const operations = Object.freeze([
  ...Object.values(workspaceContract),
  ...Object.values(apiKeyContract),
  ...Object.values(campaignContract),
  ...Object.values(voucherContract),
  ...Object.values(customerContract),
  ...Object.values(redemptionContract),
  ...Object.values(promotionContract),
  ...Object.values(webhookContract),
  ...Object.values(eventContract),
  ...Object.values(orderContract),
  ...Object.values(orderReturnContract),
  ...Object.values(publicationContract),
  ...Object.values(validationRuleContract),
  ...Object.values(segmentContract),
  ...Object.values(auditContract),
  ...Object.values(loyaltyContract),
  ...Object.values(customEventContract),
  ...Object.values(rewardContract),
  ...Object.values(referralContract),
  ...Object.values(staffContract),
  ...Object.values(insightContract),
  ...Object.values(importContract),
]);
