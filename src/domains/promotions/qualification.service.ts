// Qualification: what a customer can use for this cart right now (automatic tiers, vouchers assigned or published to
// them, their gift cards), each with what it gives, best deal first. Tiers come from the workspace's qualification
// index (rebuilt only when a tier, rule, campaign or workspace setting changed: the workspace's promotions_version is
// read per request, in one statement with the customer's facts and codes), are decided in full on the index's
// snapshots, and those whose figures move without a version change (limits, budgets) are confirmed by the engine. Customer vouchers are asked of the engine,
// one message per partition.
import type { CustomerReference } from '../../contract/common.schemas.js';
import type { CustomerUse, RedemptionEngine } from '../../contract/engine-port.js';
import type { TierIndex, TierIndexes } from '../../contract/handler.js';
import type { ZoneCalendar } from '../../contract/zone-calendar.js';
import type { Pool } from '../../platform/database.js';
import {
  effectivePriority,
  eligibility,
  grant,
  isExclusive,
  startOrder,
  validationOutcome,
  type UseContext,
  type VoucherSnapshot,
} from '../../checkout/redemption.rules.js';
import type { Order, ValidationOutcome } from '../../contract/checkout.schemas.js';
import { previewCustomer } from '../redemptions/index.js';
import { QualificationIndex } from './qualification-index.js';
import { findQualificationReads } from './qualification.queries.js';
import type { QualifiedOffer } from './tier.schemas.js';

const MAX_CUSTOMER_VOUCHERS = 100;

interface Cached {
  version: string;
  index: QualificationIndex;
}

/**
 * The workspaces' tier indexes (see TierIndexes), made once per service at composition from the engine's tier
 * snapshots: a workspace's index is rebuilt when its promotions version moved, once however many requests ask.
 */
export function qualificationIndexes(engine: Pick<RedemptionEngine, 'tierSnapshots'>): TierIndexes {
  const indexes = new Map<string, Cached>();
  const building = new Map<string, Promise<Cached>>();
  return {
    async at(workspaceId, version) {
      const cached = indexes.get(workspaceId);
      if (cached && cached.version === version) return cached.index;
      const key = `${workspaceId} ${version}`;
      let pending = building.get(key);
      if (!pending) {
        pending = engine.tierSnapshots(workspaceId).then((tiers) => {
          const built = { version, index: new QualificationIndex(tiers) };
          if (indexes.size > 1_000) indexes.clear();
          indexes.set(workspaceId, built);
          return built;
        });
        building.set(key, pending);
        pending.finally(() => building.delete(key)).catch(() => undefined);
      }
      return (await pending).index;
    },
  };
}

export type QualificationScope = 'ALL' | 'AUTOMATIC' | 'CUSTOMER_VOUCHERS';

/** What a qualification decides on: its customer (undefined: named by id and not found), the tier index, the customer's codes. */
export interface QualificationInputs {
  customer: CustomerUse | undefined;
  /** Undefined when the scope leaves tiers out. */
  index: TierIndex | undefined;
  customerCodes: string[];
}

/**
 * Everything a qualification reads before deciding, in one statement (the promotions version, the customer's facts
 * and codes), then the index at that version (from memory unless a tier, rule, campaign or setting changed).
 */
export async function qualificationInputs(
  db: Pool,
  indexes: TierIndexes,
  workspaceId: string,
  ref: CustomerReference | undefined,
  scope: QualificationScope,
): Promise<QualificationInputs> {
  const reads = await findQualificationReads(db, workspaceId, ref, scope === 'AUTOMATIC' ? 0 : MAX_CUSTOMER_VOUCHERS);
  const customer = previewCustomer(ref, reads.customer);
  if (!customer) return { customer, index: undefined, customerCodes: [] };
  const index = scope === 'CUSTOMER_VOUCHERS' ? undefined : await indexes.at(workspaceId, reads.version);
  return { customer, index, customerCodes: reads.codes };
}

export interface QualificationRequest {
  workspaceId: string;
  /** The workspace's tier index (qualificationInputs); needed unless the scope is CUSTOMER_VOUCHERS. */
  index: TierIndex | undefined;
  order: Order;
  customer: CustomerUse;
  scope: QualificationScope;
  limit: number;
  /** The customer's codes (qualificationInputs). */
  customerCodes: string[];
  /** Codes named in the request: weighed whatever the scope. */
  codes?: string[] | undefined;
}

type Passed = Extract<ValidationOutcome, { valid: true }>;
const usable = (outcome: ValidationOutcome): outcome is Passed => outcome.valid && outcome.discount.amount > 0;

function tierOffer(tier: VoucherSnapshot, outcome: Passed): QualifiedOffer {
  return {
    kind: 'PROMOTION_TIER',
    tierId: tier.id,
    ...(tier.campaignId ? { campaignId: tier.campaignId } : {}),
    ...(tier.name ? { name: tier.name } : {}),
    discount: outcome.discount,
    ...(outcome.order ? { order: outcome.order } : {}),
    priority: effectivePriority(tier),
    exclusive: isExclusive(tier),
  };
}

function voucherOffer(code: string, outcome: Passed, stacking: { priority: number; exclusive: boolean }): QualifiedOffer {
  return {
    kind: outcome.voucher?.type === 'GIFT_CARD' ? 'GIFT_CARD' : 'VOUCHER',
    code,
    ...(outcome.voucher?.campaignId ? { campaignId: outcome.voucher.campaignId } : {}),
    discount: outcome.discount,
    ...(outcome.order ? { order: outcome.order } : {}),
    priority: stacking.priority,
    exclusive: stacking.exclusive,
  };
}

const bestFirst = (a: QualifiedOffer, b: QualifiedOffer) =>
  b.discount.amount - a.discount.amount || b.priority - a.priority || (a.name ?? a.code ?? '').localeCompare(b.name ?? b.code ?? '');

/** Tiers that apply to the cart, best first, confirmed by the engine, at most `limit`. */
async function qualifyingTiers(engine: RedemptionEngine, calendar: ZoneCalendar, request: QualificationRequest, now: number): Promise<QualifiedOffer[]> {
  const index = request.index;
  if (!index) return [];
  const use: UseContext = { customerId: request.customer.id, customerGiven: request.customer.given, customerUses: 0, heldUses: 0, heldBalance: 0, facts: request.customer.facts };
  // Ranked on the index's snapshots first (no I/O, no per-line split): only those that would give something are
  // worth a full decision, and only the best `limit` of them get one.
  const start = startOrder(request.order);
  const likely = index
    .candidates(request.order)
    .flatMap((tier) => {
      if (eligibility(tier, use, { order: request.order }, now, calendar)) return [];
      const amount = grant(tier, use, { order: request.order }, start, false).amount;
      return amount > 0 ? [{ tier, amount }] : [];
    })
    .sort((a, b) => b.amount - a.amount);
  // The index is rebuilt whenever a tier, rule, campaign or workspace setting changes, so its snapshots decide settings
  // exactly; only what moves without that (use counts, per-customer uses, budgets) needs the engine's live figures.
  const live = (t: VoucherSnapshot) => t.redemptionLimit !== null || t.perCustomerLimit !== null || t.campaign?.budget != null;
  const confirmed: QualifiedOffer[] = [];
  for (let at = 0; at < likely.length && confirmed.length < request.limit; at += request.limit) {
    const chunk = likely.slice(at, at + request.limit);
    const liveOnes = chunk.filter((c) => live(c.tier));
    const confirmedLive = liveOnes.length
      ? await engine.validateMany({ workspaceId: request.workspaceId, codes: liveOnes.map((c) => c.tier.code), kind: 'TIER', order: request.order, customer: request.customer })
      : [];
    const liveOutcome = new Map(liveOnes.map((c, i) => [c.tier.code, confirmedLive[i]!.outcome]));
    for (const c of chunk) {
      const outcome = liveOutcome.get(c.tier.code) ?? validationOutcome(c.tier, use, { order: request.order }, now, calendar);
      if (usable(outcome)) confirmed.push(tierOffer(c.tier, outcome));
    }
  }
  return confirmed.sort(bestFirst).slice(0, request.limit);
}

/** Vouchers and gift cards assigned (or published) to the customer that can be used for this cart now. */
async function qualifyingCustomerVouchers(engine: RedemptionEngine, request: QualificationRequest): Promise<QualifiedOffer[]> {
  const codes = [...new Set([...(request.scope === 'AUTOMATIC' ? [] : request.customerCodes), ...(request.codes ?? [])])];
  const outcomes = codes.length ? await engine.validateMany({ workspaceId: request.workspaceId, codes, order: request.order, customer: request.customer }) : [];
  return outcomes.flatMap(({ outcome, ...stacking }, i) => (usable(outcome) ? [voucherOffer(codes[i]!, outcome, stacking)] : []));
}

export async function qualify(engine: RedemptionEngine, calendar: ZoneCalendar, request: QualificationRequest, now = Date.now()): Promise<QualifiedOffer[]> {
  const [tiers, vouchers] = await Promise.all([
    request.scope === 'CUSTOMER_VOUCHERS' ? [] : qualifyingTiers(engine, calendar, request, now),
    request.scope === 'AUTOMATIC' && !request.codes?.length ? [] : qualifyingCustomerVouchers(engine, request),
  ]);
  return [...tiers, ...vouchers].sort(bestFirst).slice(0, request.limit);
}
