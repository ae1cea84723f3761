// Applies a campaign's voucher template to a new voucher: fields the request leaves out come from the template. Pure.
import type { ProblemFieldError } from '../contract/problems.js';
import type { Schedule } from '../contract/schedule.schemas.js';
import type { Discount } from '../contract/discount.schemas.js';
import type { CreateVoucherBody, VoucherTemplate, VoucherType } from '../contract/voucher-template.schemas.js';

/** The parts of a campaign that shape its vouchers. */
export interface TemplateSource {
  type: string;
  currency: string | null;
  voucher: VoucherTemplate | null;
}

export interface VoucherFields {
  type: VoucherType;
  discount: Discount | null;
  giftAmount: number | null;
  currency: string | null;
  active: boolean;
  startDate: string | null;
  expirationDate: string | null;
  redemptionLimit: number | null;
  perCustomerLimit: number | null;
  priority: number | null;
  exclusive: boolean | null;
  maxDiscount: number | null;
  customerId: string | null;
  validationRuleIds: string[];
  schedule: Schedule | null;
  metadata: Record<string, unknown>;
}

export type VoucherInput = Omit<CreateVoucherBody, 'code' | 'campaignId'>;

/** What the workspace adds to a template: its default currency (null: none). `path` prefixes error paths. */
export interface TemplateContext {
  defaultCurrency: string | null;
  path?: string;
}

/** `currency_required`: the voucher's amounts are money and neither it, its campaign nor its workspace names a currency. */
export type TemplateResult = { ok: true; fields: VoucherFields } | { ok: false; errors: ProblemFieldError[]; code?: 'currency_required' };

/**
 * The fields of a voucher that are sums of money (minor units of some currency), by their path: without a currency an
 * AMOUNT discount of 500 would take 500 off an order in any currency. PERCENT (without a cap) and UNIT discounts take
 * a share or units of the order itself, in the order's currency, so they need none.
 */
export function moneyFieldsOf(discount: Discount | null | undefined, maxDiscount: number | null | undefined): string[] {
  const fields: string[] = [];
  if (discount?.type === 'AMOUNT') fields.push('discount.amountOff');
  if (discount?.type === 'FIXED') fields.push('discount.fixedAmount');
  if (discount?.type === 'PERCENT' && discount.amountLimit !== undefined) fields.push('discount.amountLimit');
  if (maxDiscount !== null && maxDiscount !== undefined) fields.push('maxDiscount');
  return fields;
}

const VOUCHER_TYPE_OF_CAMPAIGN: Readonly<Record<string, VoucherType>> = { GIFT_VOUCHERS: 'GIFT_CARD', LOYALTY_PROGRAM: 'LOYALTY_CARD' };

/** An explicit null clears an inherited value; only a field left out (undefined) inherits. */
function inherit<T>(given: T | null | undefined, inherited: T | null | undefined): T | null {
  return given !== undefined ? given : (inherited ?? null);
}

function voucherType(input: VoucherInput, campaign: TemplateSource | undefined): VoucherType | undefined {
  if (input.type) return input.type;
  if (!campaign) return undefined;
  return campaign.voucher?.type ?? VOUCHER_TYPE_OF_CAMPAIGN[campaign.type] ?? 'DISCOUNT';
}

/**
 * A campaign's voucher template whose amounts are money needs a currency to count them in: the template's, the
 * campaign's, or the workspace's default; the field error when none of them names one.
 */
export function templateCurrencyProblem(campaign: Omit<TemplateSource, 'type'>, defaultCurrency: string | null): ProblemFieldError | undefined {
  const template = campaign.voucher;
  const money = moneyFieldsOf(template?.discount, template?.maxDiscount);
  if (!money.length || template?.currency || campaign.currency || defaultCurrency) return undefined;
  const fields = money.map((field) => `voucher.${field}`).join(', ');
  return { path: 'body.currency', message: `${fields} ${money.length > 1 ? 'are' : 'is'} money: give the campaign a currency (or its template one, or the workspace a defaultCurrency)` };
}

/** `context.path` prefixes error paths: `body` for a request (the default), `campaign.voucher` for bulk generation. */
export function applyVoucherTemplate(input: VoucherInput, campaign: TemplateSource | undefined, context: TemplateContext): TemplateResult {
  const path = context.path ?? 'body';
  const errors: ProblemFieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ path: `${path}.${field}`, message });
  const template: VoucherTemplate = campaign?.voucher ?? {};
  const type = voucherType(input, campaign);
  if (!type) return { ok: false, errors: [{ path: `${path}.type`, message: 'type is required unless campaignId is given' }] };

  const discount = type === 'DISCOUNT' ? (input.discount ?? template.discount ?? null) : null;
  if (type === 'DISCOUNT' && !discount) fail('discount', "a DISCOUNT voucher needs a discount (in the body or the campaign's voucher template)");
  if (type !== 'DISCOUNT' && input.discount) fail('discount', 'only DISCOUNT vouchers have a discount');

  const gift = type === 'GIFT_CARD' ? (input.gift ?? template.gift) : undefined;
  if (type === 'GIFT_CARD' && !gift) fail('gift', "a GIFT_CARD voucher needs gift credits (in the body or the campaign's voucher template)");
  if (type !== 'GIFT_CARD' && input.gift) fail('gift', 'only GIFT_CARD vouchers have gift credits');

  const named = input.currency ?? input.gift?.currency ?? template.currency ?? gift?.currency ?? null;
  if (gift && named !== gift.currency) fail('currency', `currency ${named} differs from the gift currency ${gift.currency}`);
  if (campaign?.currency && named && named !== campaign.currency) {
    fail('currency', `currency ${named} differs from the campaign currency ${campaign.currency}`);
  }

  const startDate = inherit(input.startDate, template.startDate);
  const expirationDate = inherit(input.expirationDate, template.expirationDate);
  if (startDate && expirationDate && Date.parse(expirationDate) < Date.parse(startDate)) fail('expirationDate', 'expirationDate is before startDate');
  if (errors.length) return { ok: false, errors };

  const maxDiscount = inherit(input.maxDiscount, template.maxDiscount);
  const money = moneyFieldsOf(discount, maxDiscount);
  // Money named by neither the voucher nor its campaign is counted in the workspace's default, kept on the voucher so
  // that a later change of the default never changes what its amounts mean.
  const currency = money.length && !named && !campaign?.currency ? context.defaultCurrency : named;
  if (money.length && !currency && !campaign?.currency) {
    const message = `${money.join(', ')} ${money.length > 1 ? 'are' : 'is'} money: give the voucher a currency (or its campaign one, or the workspace a defaultCurrency)`;
    return { ok: false, code: 'currency_required', errors: [{ path: `${path}.currency`, message }] };
  }

  return {
    ok: true,
    fields: {
      type,
      discount,
      giftAmount: gift?.amount ?? null,
      currency,
      active: input.active ?? true,
      startDate,
      expirationDate,
      redemptionLimit: inherit(input.redemptionLimit, template.redemptionLimit),
      perCustomerLimit: inherit(input.perCustomerLimit, template.perCustomerLimit),
      priority: inherit(input.priority, template.priority),
      exclusive: inherit(input.exclusive, template.exclusive),
      maxDiscount,
      customerId: input.customerId ?? null,
      validationRuleIds: input.validationRuleIds ?? [],
      schedule: inherit(input.schedule, template.schedule),
      metadata: input.metadata ?? template.metadata ?? {},
    },
  };
}
