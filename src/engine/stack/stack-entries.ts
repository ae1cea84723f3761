// A stack's entries as its decision reads them: tier entries named by their voucher row's internal code, each
// entry's snapshot and use context asked of the partitions that own them (one message per partition, at once). The
// stack's redemption across partitions, its preview and the best deal all read them so, through this one function.
import type { CustomerUse } from '../../contract/engine-port.js';
import type { StackEntry } from '../../checkout/stack.rules.js';
import { tierCode } from '../../domains/promotions/tier.rules.js';
import type { PartitionRouter } from '../partition-router.js';

export interface StackVoucher {
  code?: string | undefined;
  tierId?: string | undefined;
  amount?: number | undefined;
  session?: { key: string } | undefined;
}

/** A stack entry whose `code` is a voucher code, or a tier's internal code when tierId is set. */
export type ResolvedVoucher = Omit<StackVoucher, 'code'> & { code: string };

export function resolveVouchers(vouchers: readonly StackVoucher[]): ResolvedVoucher[] {
  return vouchers.map((v) => ({ ...v, code: v.tierId !== undefined ? tierCode(v.tierId) : v.code! }));
}

/**
 * The entries of a stack on the partitions' current state (holds of other stacks and reservations of other sessions
 * counted; an entry's own session's reservation not). A snapshot of the wrong kind (a tier for a code entry or the
 * reverse) is no snapshot.
 */
export async function stackEntries(router: PartitionRouter, workspaceId: string, vouchers: readonly ResolvedVoucher[], customer: CustomerUse): Promise<StackEntry[]> {
  const sessions = new Map(vouchers.flatMap((v) => (v.session ? [[v.code, v.session.key] as const] : [])));
  const byCode = await router.snapshots(workspaceId, vouchers.map((v) => v.code), customer, sessions);
  return vouchers.map((v) => {
    const entry = byCode.get(v.code)!;
    const kindMatches = entry.voucher?.kind === (v.tierId !== undefined ? 'TIER' : 'CODE');
    return { code: v.code, tierId: v.tierId, amount: v.amount, voucher: kindMatches ? entry.voucher! : undefined, use: entry.use };
  });
}

/**
 * Has the partitions of these entries read their campaigns' budgets again before the next decision: what a partition
 * does itself before it refuses a redemption on budget figures read a while ago (another partition's uses count).
 */
export async function rereadBudgets(router: PartitionRouter, workspaceId: string, vouchers: readonly ResolvedVoucher[], entries: readonly StackEntry[]): Promise<void> {
  const campaigns = new Set(entries.flatMap((e) => (e.voucher?.campaign?.budget ? [e.voucher.campaign.id] : [])));
  const slots = new Set(vouchers.map((v) => router.route(workspaceId, v.code)));
  await Promise.all([...slots].flatMap((slot) => [...campaigns].map((budgetOf) => router.call(slot, { type: 'forget', workspaceId, budgetOf }))));
}
