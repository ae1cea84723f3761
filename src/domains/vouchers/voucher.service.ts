// Voucher use cases. Every voucher write goes through here, inside the operation's unit of work: each records its
// change and emits its event in the transaction that writes it (the handler tells the engine after the commit).
import type { UnitOfWork } from '../../contract/handler.js';
import { invalidField as invalid, problem, ProblemError } from '../../contract/problems.js';
import { sqlState, UNIQUE_VIOLATION, type Sql } from '../../platform/database.js';
import { findCampaign, type Campaign } from '../campaigns/index.js';
import { unknownValidationRules } from '../rules/index.js';
import { findDefaultCurrency } from '../workspaces/index.js';
import { codeSpaceSize, codeSpecProblem, drawCodes, generateCode, resolveCodeSpec, timeOrderedIds, type CodeSpec } from './voucher-code-generator.js';
import { applyVoucherTemplate, moneyFieldsOf, type TemplateResult, type VoucherFields } from '../../checkout/voucher-template.rules.js';
import {
  deleteVoucherByCode,
  insertGeneratedVouchers,
  insertGiftCredits,
  insertVoucher,
  lockCodeGeneration,
  lockVoucherByCode,
  patchVoucher,
  refreshVoucherStatistics,
  updateVoucherActive,
  voucherStatisticsAreBehind,
} from './voucher.queries.js';
import type { GeneratedVouchers, GenerateVouchersBody, UpdateVoucherBody, Voucher } from './voucher.schemas.js';
import type { CreateVoucherBody } from '../../contract/voucher-template.schemas.js';

const CODE_DRAWS = 10;
const GENERATION_ROUNDS = 8;
const MAX_CANDIDATES = 200_000;
const FOREIGN_KEY_VIOLATION = '23503';

const voucherNotFound = () => problem('not_found', 'no such voucher');

function fieldsOrThrow(result: TemplateResult): VoucherFields {
  if (result.ok) return result.fields;
  throw new ProblemError(result.code ?? 'invalid_request', result.errors.map((e) => e.message).join('; '), { errors: result.errors });
}

/** A campaign deleted between its lookup and the insert fails the foreign key: it is missing, as for the lookup. */
function campaignGone(error: unknown): never {
  if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw problem('not_found', 'no such campaign');
  throw error;
}

/** A second LOYALTY_CARD of one customer in one program fails the membership index: the customer is a member. */
function secondLoyaltyCard(error: unknown): never {
  if (sqlState(error) === UNIQUE_VIOLATION && (error as { constraint?: unknown }).constraint === 'vouchers_loyalty_member') {
    throw problem('conflict', 'the customer is a member of this program already');
  }
  throw error;
}

async function requireCampaign(db: Sql, workspaceId: string, campaignId: string): Promise<Campaign> {
  const campaign = await findCampaign(db, workspaceId, campaignId);
  if (!campaign) throw problem('not_found', 'no such campaign');
  return campaign;
}

/**
 * A gift card's credits and its CREDITS_ADDED ledger entry commit together: the ledger always sums to the balance.
 * A campaign deleted before the insert fails its foreign key, which aborts the unit: it answers 404, nothing commits.
 */
export async function createVoucher({ tx, record, emit }: UnitOfWork, workspaceId: string, input: CreateVoucherBody): Promise<Voucher> {
  const { code, campaignId, ...settings } = input;
  const voucher = await insertVoucherFromTemplate(tx, workspaceId, code, campaignId, settings).catch(campaignGone);
  record({ resourceType: 'voucher', resourceId: voucher.id, after: voucher });
  emit('voucher.created', { voucherId: voucher.id, code: voucher.code, voucher });
  return voucher;
}

async function insertVoucherFromTemplate(
  tx: Sql,
  workspaceId: string,
  code: string | undefined,
  campaignId: string | undefined,
  settings: Omit<CreateVoucherBody, 'code' | 'campaignId'>,
): Promise<Voucher> {
  const campaign = campaignId ? await requireCampaign(tx, workspaceId, campaignId) : undefined;
  const fields = fieldsOrThrow(applyVoucherTemplate(settings, campaign, { defaultCurrency: await findDefaultCurrency(tx, workspaceId) }));
  const unknownRules = await unknownValidationRules(tx, workspaceId, fields.validationRuleIds);
  if (unknownRules) throw unknownRules;
  const voucher = await (code
    ? insertVoucher(tx, workspaceId, campaign?.id ?? null, code, fields)
    : insertWithGeneratedCode(tx, workspaceId, campaign, fields)
  ).catch(secondLoyaltyCard);
  if (!voucher) throw problem('conflict', `a voucher with code ${code} exists already`);
  if (fields.giftAmount !== null) await insertGiftCredits(tx, workspaceId, voucher.id, fields.giftAmount, fields.giftAmount);
  return voucher;
}

async function insertWithGeneratedCode(tx: Sql, workspaceId: string, campaign: Campaign | undefined, fields: VoucherFields) {
  const spec = resolveCodeSpec(campaign?.voucher?.codeConfig);
  const refusal = codeSpecProblem(spec, 1);
  if (refusal) throw invalid('campaign.voucher.codeConfig', refusal);
  for (let draw = 0; draw < CODE_DRAWS; draw++) {
    const voucher = await insertVoucher(tx, workspaceId, campaign?.id ?? null, generateCode(spec), fields);
    if (voucher) return voucher;
  }
  throw problem('conflict', 'no free code found with the campaign codeConfig; give a code or widen the codeConfig');
}

async function requireVoucher(tx: Sql, workspaceId: string, code: string): Promise<Voucher> {
  const voucher = await lockVoucherByCode(tx, workspaceId, code);
  if (!voucher) throw voucherNotFound();
  return voucher;
}

export async function updateVoucher({ tx, record, emit }: UnitOfWork, workspaceId: string, code: string, patch: UpdateVoucherBody): Promise<Voucher> {
  const before = await requireVoucher(tx, workspaceId, code);
  // A loyalty card is its customer's membership of its program: its owner moves only with a new membership.
  if (before.type === 'LOYALTY_CARD' && patch.customerId !== undefined && patch.customerId !== before.customerId) {
    throw invalid('body.customerId', 'the customer of a loyalty card cannot change: add the other customer as a member instead');
  }
  const unknownRules = await unknownValidationRules(tx, workspaceId, patch.validationRuleIds);
  if (unknownRules) throw unknownRules;
  const priced = await requireCurrencyForMoney(tx, workspaceId, before, patch);
  const after = await patchVoucher(tx, workspaceId, code, priced);
  if (!after) throw refusedUpdate(before, priced);
  record({ resourceType: 'voucher', resourceId: after.id, before, after });
  emit('voucher.updated', { voucherId: after.id, code: after.code, voucher: after });
  return after;
}

/**
 * A patch that makes the voucher's amounts money (an AMOUNT discount, a maxDiscount) needs a currency to count them in:
 * the patch's, the voucher's, its campaign's, else the workspace's default, which the patch then sets on the voucher.
 */
async function requireCurrencyForMoney(tx: Sql, workspaceId: string, before: Voucher, patch: UpdateVoucherBody): Promise<UpdateVoucherBody> {
  if (patch.currency !== undefined && before.currency && patch.currency !== before.currency) {
    throw invalid('body.currency', `the voucher's currency is ${before.currency}; a currency once set does not change`);
  }
  const campaign = before.campaignId ? await findCampaign(tx, workspaceId, before.campaignId) : undefined;
  if (patch.currency !== undefined && campaign?.currency && patch.currency !== campaign.currency) {
    throw invalid('body.currency', `currency ${patch.currency} differs from the campaign currency ${campaign.currency}`);
  }
  const discount = patch.discount !== undefined ? patch.discount : before.discount;
  const maxDiscount = patch.maxDiscount !== undefined ? patch.maxDiscount : before.maxDiscount;
  const money = moneyFieldsOf(discount, maxDiscount);
  if (!money.length || before.currency || patch.currency || campaign?.currency) return patch;
  const defaultCurrency = await findDefaultCurrency(tx, workspaceId);
  if (defaultCurrency) return { ...patch, currency: defaultCurrency };
  const message = `${money.join(', ')} would be money without a currency: the voucher, its campaign and the workspace name none`;
  throw new ProblemError('currency_required', message, { errors: [{ path: 'body.currency', message }] });
}

/** Names the SQL guard that refused an update of the (locked, so unchanged) voucher. */
function refusedUpdate(current: Voucher, patch: UpdateVoucherBody): ProblemError {
  if (patch.discount && current.type !== 'DISCOUNT') return invalid('body.discount', 'only DISCOUNT vouchers have a discount');
  const startDate = patch.startDate !== undefined ? patch.startDate : current.startDate;
  const expirationDate = patch.expirationDate !== undefined ? patch.expirationDate : current.expirationDate;
  if (startDate && expirationDate && Date.parse(expirationDate) < Date.parse(startDate)) {
    return invalid('body.expirationDate', 'expirationDate is before startDate');
  }
  const limit = patch.redemptionLimit !== undefined ? patch.redemptionLimit : current.redemption.limit;
  if (limit !== null && limit < current.redemption.redeemedCount) {
    return problem('conflict', `redemptionLimit ${limit} is below the ${current.redemption.redeemedCount} redemptions already made`);
  }
  return problem('conflict', 'the voucher changed during the update; retry');
}

export async function disableVoucher(unit: UnitOfWork, workspaceId: string, code: string): Promise<Voucher> {
  return setVoucherActive(unit, workspaceId, code, { active: false, event: 'voucher.disabled' });
}

export async function enableVoucher(unit: UnitOfWork, workspaceId: string, code: string): Promise<Voucher> {
  return setVoucherActive(unit, workspaceId, code, { active: true, event: 'voucher.enabled' });
}

async function setVoucherActive(
  { tx, record, emit }: UnitOfWork,
  workspaceId: string,
  code: string,
  change: { active: boolean; event: 'voucher.disabled' | 'voucher.enabled' },
): Promise<Voucher> {
  const before = await requireVoucher(tx, workspaceId, code);
  const after = await updateVoucherActive(tx, workspaceId, code, change.active);
  if (!after) throw voucherNotFound();
  record({ resourceType: 'voucher', resourceId: after.id, before, after });
  emit(change.event, { voucherId: after.id, code: after.code, voucher: after });
  return after;
}

export async function deleteVoucher({ tx, record, emit }: UnitOfWork, workspaceId: string, code: string): Promise<void> {
  const before = await deleteVoucherByCode(tx, workspaceId, code);
  if (!before) throw voucherNotFound();
  record({ resourceType: 'voucher', resourceId: before.id, before });
  emit('voucher.deleted', { voucherId: before.id, code: before.code });
}

/**
 * Bulk creation in the unit's one transaction: every code unique, the campaign template copied into every voucher.
 * The audit entry is one for the whole batch, on the campaign (`after: { generated }`), and no event per code: a
 * million codes must not make a million entries or events.
 */
export async function generateVouchers(
  { tx, record }: UnitOfWork,
  workspaceId: string,
  campaignId: string,
  request: GenerateVouchersBody,
): Promise<GeneratedVouchers> {
  const codes = await insertCampaignCodes(tx, workspaceId, campaignId, request).catch(campaignGone);
  record({ resourceType: 'campaign', resourceId: campaignId, after: { generated: codes.length } });
  return { campaignId, count: codes.length, codes };
}

async function insertCampaignCodes(tx: Sql, workspaceId: string, campaignId: string, request: GenerateVouchersBody): Promise<string[]> {
  const campaign = await requireCampaign(tx, workspaceId, campaignId);
  const fields = fieldsOrThrow(applyVoucherTemplate({}, campaign, { defaultCurrency: await findDefaultCurrency(tx, workspaceId), path: 'campaign.voucher' }));
  const spec = resolveCodeSpec({ ...campaign.voucher?.codeConfig, ...request.codeConfig });
  const refusal = codeSpecProblem(spec, request.count);
  if (refusal) throw invalid('body.codeConfig', refusal);
  await lockCodeGeneration(tx, workspaceId);
  return insertUniqueCodes(tx, workspaceId, campaignId, fields, spec, request.count);
}

/**
 * After a bulk generation has committed (ANALYZE is maintenance, not part of the change). Thousands of new rows at
 * once: fresh planner statistics now, not at autovacuum's next round (or never, where it is off), or lookups by code
 * may be planned as scans of the workspace's vouchers.
 */
export async function refreshStatisticsAfterGeneration(db: Sql, generated: GeneratedVouchers): Promise<void> {
  if (generated.count < ANALYZE_AFTER) return;
  // ANALYZE of a million-row table takes most of a second: only when the statistics know fewer rows than were added.
  if (await voucherStatisticsAreBehind(db, generated.count).catch(() => true)) await refreshVoucherStatistics(db).catch(() => undefined);
}

const ANALYZE_AFTER = 1_000;

/**
 * Inserts `count` vouchers. Codes taken already are skipped and replaced from fresh draws; each round draws twice as
 * many candidates per missing code as the one before, so a crowded code space fills in a few rounds or is declared used up.
 */
async function insertUniqueCodes(tx: Sql, workspaceId: string, campaignId: string, fields: VoucherFields, spec: CodeSpec, count: number) {
  const space = codeSpaceSize(spec);
  const tried = new Set<string>();
  const inserted: string[] = [];
  for (let round = 0; inserted.length < count; round++) {
    const missing = count - inserted.length;
    const untried = space - tried.size;
    if (round === GENERATION_ROUNDS || untried <= 0) {
      throw problem('conflict', `only ${inserted.length} of ${count} codes were free in this code space; widen the codeConfig`);
    }
    const wanted = Math.min(missing * 2 ** round, MAX_CANDIDATES, untried);
    // In a crowded space most draws hit tried codes: allow several draws per code of the space before the next round.
    const codes = drawCodes(spec, wanted, tried, wanted * 10 + 8 * Math.min(space, 1_000_000));
    if (codes.length) {
      const ids = timeOrderedIds(codes.length);
      for (const code of await insertGeneratedVouchers(tx, workspaceId, campaignId, fields, { codes, ids }, missing)) inserted.push(code);
    }
    // Only a next round needs to know what was tried (free candidates cut by the LIMIT included).
    if (inserted.length < count) for (const code of codes) tried.add(code);
  }
  return inserted;
}
