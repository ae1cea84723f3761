// Publishing, in the operation's unit of work: resolves the customer, locks the campaign, returns the customer's code
// of a once-per-customer campaign or assigns a free code (else one made from the template), and emits voucher.published.
import type { UnitOfWork } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { sqlState, type Sql } from '../../platform/database.js';
import { requireCustomer } from '../customers/index.js';
import { codeSpecProblem, generateCode, insertGiftCredits, insertVoucher, resolveCodeSpec } from '../vouchers/index.js';
import { applyVoucherTemplate } from '../../checkout/voucher-template.rules.js';
import { findDefaultCurrency } from '../workspaces/index.js';
import {
  assignFreeVoucher,
  findCustomerPublication,
  insertPublication,
  lockCampaign,
  type PublishingCampaign,
} from './publication.queries.js';
import type { CreatePublicationBody, PublicationResult } from './publication.schemas.js';

const RESOURCE = 'publication';
const CODE_DRAWS = 10;
const FOREIGN_KEY_VIOLATION = '23503';

function refusal(campaign: PublishingCampaign): string | undefined {
  if (campaign.type === 'PROMOTION') return 'a PROMOTION campaign has no codes to publish';
  if (!campaign.active) return 'the campaign is inactive';
  if (campaign.expired) return 'the campaign has expired';
  return undefined;
}

/** A new voucher from the campaign's template, assigned to the customer; undefined when the campaign has no template. */
async function voucherFromTemplate(tx: Sql, workspaceId: string, campaign: PublishingCampaign, customerId: string) {
  const template = campaign.voucherTemplate;
  if (!template) return undefined;
  const result = applyVoucherTemplate(
    { customerId },
    { type: campaign.type, currency: campaign.currency, voucher: template },
    { defaultCurrency: await findDefaultCurrency(tx, workspaceId), path: 'campaign.voucher' },
  );
  if (!result.ok) {
    throw problem('conflict', `no codes left in this campaign, and its voucher template cannot make one: ${result.errors.map((e) => e.message).join('; ')}`);
  }
  const spec = resolveCodeSpec(template.codeConfig);
  const unusable = codeSpecProblem(spec, 1);
  if (unusable) throw problem('conflict', `no codes left in this campaign, and its codeConfig cannot make one: ${unusable}`);
  for (let draw = 0; draw < CODE_DRAWS; draw++) {
    const voucher = await insertVoucher(tx, workspaceId, campaign.id, generateCode(spec), result.fields);
    if (!voucher) continue;
    // As for vouchers.create: a gift card's credits and their CREDITS_ADDED entry commit together.
    if (result.fields.giftAmount !== null) await insertGiftCredits(tx, workspaceId, voucher.id, result.fields.giftAmount, result.fields.giftAmount);
    return { id: voucher.id, code: voucher.code };
  }
  throw problem('conflict', 'no codes left in this campaign, and no free code was found with its codeConfig; widen the codeConfig');
}

export async function publishVoucher({ tx, record, emit }: UnitOfWork, workspaceId: string, input: CreatePublicationBody): Promise<PublicationResult> {
  try {
    // Customer first, campaign lock second, in every publication: a new customer's row is never awaited under the lock.
    const customerId = await requireCustomer(tx, workspaceId, input.customer);
    const campaign = await lockCampaign(tx, workspaceId, input.campaignId);
    if (!campaign) throw problem('not_found', 'no such campaign');
    const refused = refusal(campaign);
    if (refused) throw problem('conflict', refused);
    if (campaign.oncePerCustomer) {
      const existing = await findCustomerPublication(tx, workspaceId, campaign.id, customerId);
      // Nothing published (the customer may have been created): the entry names the publication answered again, with no changes.
      if (existing) {
        record({ resourceType: RESOURCE, resourceId: existing.id });
        return { ...existing, existing: true };
      }
    }
    const voucher =
      (await assignFreeVoucher(tx, workspaceId, campaign.id, customerId)) ??
      (await voucherFromTemplate(tx, workspaceId, campaign, customerId));
    if (!voucher) throw problem('conflict', 'no codes left in this campaign');
    const publication = await insertPublication(tx, workspaceId, { campaignId: campaign.id, voucher, customerId, metadata: input.metadata ?? {} });
    record({ resourceType: RESOURCE, resourceId: publication.id, after: publication });
    emit('voucher.published', {
      publicationId: publication.id,
      campaignId: campaign.id,
      customerId,
      voucherCode: voucher.code,
    });
    return { ...publication, existing: false };
  } catch (error) {
    // The customer or the campaign was deleted between its lookup and the insert (the unit of work rolls back).
    if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw problem('not_found', 'no such customer or campaign');
    throw error;
  }
}
