// What a batch needs read before it is decided, in one query per kind for the whole batch: the vouchers the cache
// lacks (with their live sessions), per-customer uses, referees' facts, campaign budgets, and rollback targets.
import { readsCustomerUses, type VoucherSnapshot } from '../../checkout/redemption.rules.js';
import type { Sql } from '../../platform/database.js';
import type { PartitionCall } from '../messages.js';
import type { BudgetStates } from './budget-states.js';
import { loadCustomerUses, loadRedemptions, loadRefereeFacts, loadSnapshots, type RefereeKey, type StoredRedemption, type UsageKey } from './hot-path.sql.js';
import { codesOf, customerOf } from './partition-calls.js';
import { voucherKey, type HotVoucher, type VoucherStateCache } from './voucher-state-cache.js';
import { usageKey } from './write-plan.js';

export interface BatchStateDeps {
  /** The pool, or the transaction of a batch deciding under its vouchers' row locks. */
  db: Sql;
  cache: VoucherStateCache;
  budgets: BudgetStates;
}

const workspaceOf = (call: PartitionCall) => (call as { workspaceId: string }).workspaceId;

/** The cached entries of the vouchers the calls name, with the customer each call names. */
function* namedEntries(cache: VoucherStateCache, calls: readonly PartitionCall[]): Iterable<{ entry: HotVoucher | undefined; customerId: string | null | undefined }> {
  for (const call of calls) {
    const customerId = customerOf(call);
    for (const code of codesOf(call)) yield { entry: cache.peek(voucherKey(workspaceOf(call), code)), customerId };
  }
}

/** Loads, in one query each, the vouchers and per-customer counts the batch needs and the cache lacks. */
export async function loadBatchState(deps: BatchStateDeps, calls: readonly PartitionCall[], now: number): Promise<void> {
  const { db, cache } = deps;
  const wanted = new Map<string, { workspaceId: string; code: string }>();
  for (const call of calls) {
    for (const code of codesOf(call)) {
      const ws = workspaceOf(call);
      if (!cache.fresh(voucherKey(ws, code), now)) wanted.set(voucherKey(ws, code), { workspaceId: ws, code });
    }
  }
  if (wanted.size) {
    const found = await loadSnapshots(db, [...wanted.values()]);
    const byKey = new Map(found.map((s) => [voucherKey(s.snapshot.workspaceId, s.snapshot.code), s]));
    for (const key of wanted.keys()) {
      const loaded = byKey.get(key);
      const sessions = (loaded?.sessions ?? []).map(([session, amount, expiresAt]) => [session, { amount, expiresAt }] as const);
      cache.store(key, loaded?.snapshot ?? null, now, sessions);
    }
  }
  const usage = new Map<string, UsageKey & { workspaceId: string; entry: HotVoucher }>();
  for (const { entry, customerId } of namedEntries(cache, calls)) {
    if (customerId && entry?.snapshot && readsCustomerUses(entry.snapshot) && !entry.customerUses.has(customerId)) {
      usage.set(usageKey(entry.snapshot.id, customerId), { workspaceId: entry.snapshot.workspaceId, voucherId: entry.snapshot.id, customerId, entry });
    }
  }
  if (usage.size) {
    const counts = await loadCustomerUses(db, [...usage.values()]);
    for (const u of usage.values()) u.entry.customerUses.set(u.customerId, 0);
    for (const c of counts) usage.get(usageKey(c.voucherId, c.customerId))?.entry.customerUses.set(c.customerId, c.uses);
  }
  await loadReferees(db, cache, calls);
  await deps.budgets.load(cachedSnapshots(cache, calls), now);
}

/** The referees of the referral codes the calls name: their paid orders and conversions in the code's program. */
async function loadReferees(db: Sql, cache: VoucherStateCache, calls: readonly PartitionCall[]): Promise<void> {
  const wanted = new Map<string, RefereeKey & { entry: HotVoucher }>();
  for (const { entry, customerId } of namedEntries(cache, calls)) {
    const referral = entry?.snapshot?.referral;
    if (customerId && entry && referral && !entry.referees.has(customerId)) {
      wanted.set(`${entry.snapshot!.id} ${customerId}`, { workspaceId: entry.snapshot!.workspaceId, customerId, programId: referral.programId, entry });
    }
  }
  if (wanted.size === 0) return;
  const facts = await loadRefereeFacts(db, [...wanted.values()]);
  for (const w of wanted.values()) {
    const f = facts.find((x) => x.customerId === w.customerId && x.programId === w.programId);
    w.entry.referees.set(w.customerId, { hasPaidOrder: f?.hasPaidOrder ?? false, referred: f?.referred ?? false });
  }
}

/** The snapshots (in the cache) of the vouchers the calls name. */
export function* cachedSnapshots(cache: VoucherStateCache, calls: readonly PartitionCall[]): Iterable<VoucherSnapshot> {
  for (const { entry } of namedEntries(cache, calls)) if (entry?.snapshot) yield entry.snapshot;
}

/** The redemptions the batch's rollbacks name, by id. */
export async function loadRollbackTargets(db: Sql, calls: readonly PartitionCall[]): Promise<Map<string, StoredRedemption>> {
  const ids = calls.flatMap((c) => (c.type === 'rollback' ? [c.redemptionId] : []));
  const rows = await loadRedemptions(db, ids);
  return new Map(rows.map((r) => [r.id, r]));
}
