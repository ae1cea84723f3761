// Qualification: what a customer can use for this cart right now (automatic tiers, vouchers assigned or published to
// them, their gift cards), each with what it gives, best deal first. Tiers come from the workspace's qualification
// index (rebuilt only when a tier, rule or campaign changed: one indexed read of the workspace's promotions_version per
// request), are decided in full on the index's snapshots, and the best ones are confirmed by the redemption engine,
// whose counts, per-customer uses and budgets are exact. Customer vouchers are few: each is asked of the engine.
import type { RedemptionEngine } from '../../contract/engine-port.js';
import type { CustomerUse } from '../../contract/engine-port.js';
import type { Pool, Sql } from '../../platform/database.js';
import { decideSingle, effectivePriority, eligibility, grant, isExclusive, orderTotals, startOrder, type VoucherSnapshot } from '../redemptions/redemption.rules.js';
import type { Order, ValidationOutcome } from '../redemptions/redemption.schemas.js';
import { QualificationIndex } from './qualification-index.js';
import type { QualifiedOffer } from './tier.schemas.js';

const MAX_CUSTOMER_VOUCHERS = 100;

interface Cached {
  version: string;
  index: QualificationIndex;
}

const indexes = new Map<string, Cached>();
const building = new Map<string, Promise<Cached>>();

async function promotionsVersion(db: Sql, workspaceId: string): Promise<string> {
  const { rows } = await db.query<{ v: string }>('SELECT promotions_version::text AS v FROM workspaces WHERE workspace_id = $1', [workspaceId]);
  return rows[0]?.v ?? '0';
}

/** The workspace's index, rebuilt (once, however many requests ask at the same time) when its version moved. */
export async function qualificationIndex(db: Pool, engine: RedemptionEngine, workspaceId: string): Promise<QualificationIndex> {
  const version = await promotionsVersion(db, workspaceId);
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
}

export interface QualificationRequest {
  workspaceId: string;
  /** The workspace's index, when the caller fetched it already (in parallel with the customer). */
  index?: QualificationIndex | undefined;
  order: Order;
  customer: CustomerUse;
  scope: 'ALL' | 'AUTOMATIC' | 'CUSTOMER_VOUCHERS';
  limit: number;
}

function offerOf(v: VoucherSnapshot | undefined, outcome: ValidationOutcome, code: string, name?: string): QualifiedOffer {
  const isTier = v?.kind === 'TIER';
  const gift = outcome.voucher?.type === 'GIFT_CARD';
  return {
    kind: isTier ? 'PROMOTION_TIER' : gift ? 'GIFT_CARD' : 'VOUCHER',
    ...(isTier ? { tierId: v!.id } : { code }),
    ...((v?.campaignId ?? outcome.voucher?.campaignId) ? { campaignId: (v?.campaignId ?? outcome.voucher?.campaignId)! } : {}),
    ...(name ? { name } : {}),
    discount: outcome.discount!,
    ...(outcome.order ? { order: outcome.order } : {}),
    priority: v ? effectivePriority(v) : 0,
    exclusive: v ? isExclusive(v) : false,
  };
}

const bestFirst = (a: QualifiedOffer, b: QualifiedOffer) =>
  b.discount.amount - a.discount.amount || b.priority - a.priority || (a.name ?? a.code ?? '').localeCompare(b.name ?? b.code ?? '');

/** A decision on the index's own snapshot, in the engine's outcome shape. */
function outcomeOf(decided: ReturnType<typeof decideSingle>, order: Order): ValidationOutcome {
  const { decision, state } = decided;
  if (!decision.ok) return { valid: false, code: decision.code };
  return { valid: true, discount: { type: decision.discountType, amount: decision.amount }, order: orderTotals(order, state) };
}

/** Tiers that apply to the cart, best first, confirmed by the engine, at most `limit`. */
async function qualifyingTiers(db: Pool, engine: RedemptionEngine, request: QualificationRequest, now: number): Promise<QualifiedOffer[]> {
  const index = request.index ?? (await qualificationIndex(db, engine, request.workspaceId));
  const use = { customerId: request.customer.id, customerGiven: request.customer.given, customerUses: 0, heldUses: 0, heldBalance: 0, facts: request.customer.facts };
  // Ranked on the index's snapshots first (no I/O, no per-line split): only those that would give something are
  // worth a full decision, and only the best `limit` of them get one.
  const start = startOrder(request.order);
  const likely = index
    .candidates(request.order)
    .flatMap((tier) => {
      if (eligibility(tier, use, { order: request.order }, now)) return [];
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
    const liveOutcome = new Map(liveOnes.map((c, i) => [c.tier.code, confirmedLive[i]!]));
    for (const c of chunk) {
      const outcome = liveOutcome.get(c.tier.code) ?? outcomeOf(decideSingle(c.tier, use, { order: request.order }, now), request.order);
      if (outcome.valid && outcome.discount && outcome.discount.amount > 0) confirmed.push(offerOf(c.tier, outcome, c.tier.code, c.tier.name ?? undefined));
    }
  }
  return confirmed.sort(bestFirst).slice(0, request.limit);
}

/** Vouchers and gift cards assigned (or published) to the customer that can be used for this cart now. */
async function qualifyingCustomerVouchers(db: Pool, engine: RedemptionEngine, request: QualificationRequest): Promise<QualifiedOffer[]> {
  if (!request.customer.id) return [];
  const { rows } = await db.query<{ code: string }>(
    `SELECT code FROM vouchers WHERE workspace_id = $1 AND customer_id = $2 AND kind = 'CODE' AND active ORDER BY created_at DESC LIMIT ${MAX_CUSTOMER_VOUCHERS}`,
    [request.workspaceId, request.customer.id],
  );
  const outcomes = rows.length
    ? await engine.validateMany({ workspaceId: request.workspaceId, codes: rows.map((r) => r.code), order: request.order, customer: request.customer })
    : [];
  return outcomes.flatMap((outcome, i) => (outcome.valid && outcome.discount && outcome.discount.amount > 0 ? [offerOf(undefined, outcome, rows[i]!.code)] : []));
}

export async function qualify(db: Pool, engine: RedemptionEngine, request: QualificationRequest, now = Date.now()): Promise<QualifiedOffer[]> {
  const [tiers, vouchers] = await Promise.all([
    request.scope === 'CUSTOMER_VOUCHERS' ? [] : qualifyingTiers(db, engine, request, now),
    request.scope === 'AUTOMATIC' ? [] : qualifyingCustomerVouchers(db, engine, request),
  ]);
  return [...tiers, ...vouchers].sort(bestFirst).slice(0, request.limit);
}
