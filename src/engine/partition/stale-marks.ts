// What a change elsewhere makes stale in a partition's memory: a voucher, a campaign, a workspace's rules, a budget.
import type { PartitionCall } from '../messages.js';
import type { BudgetStates } from './budget-states.js';
import { keysOf } from './partition-calls.js';
import { voucherKey, type VoucherStateCache } from './voucher-state-cache.js';

/**
 * `budgetOf`: a campaign's budget usage (a rollback gave some back). `rules`: every voucher of the workspace (a rule or
 * its time zone changed). A code: its entry (also a "no such voucher" one) and its campaign's budget usage (a stack
 * that failed the budget guard decides on fresh figures next time). A campaign: its vouchers and budget. Neither (codes
 * generated in bulk): every "no such voucher" entry goes.
 */
export function forgetStale(cache: VoucherStateCache, budgets: BudgetStates, call: Extract<PartitionCall, { type: 'forget' }>): void {
  if (call.budgetOf !== undefined) {
    budgets.markStale(call.budgetOf);
  } else if (call.rules) {
    cache.markWorkspaceStale(call.workspaceId);
  } else if (call.code !== undefined) {
    const key = voucherKey(call.workspaceId, call.code);
    const campaign = cache.peek(key)?.snapshot?.campaign;
    if (campaign) budgets.markStale(campaign.id);
    cache.markStale(key);
  } else if (call.campaignId !== undefined) {
    cache.markCampaignStale(call.workspaceId, call.campaignId);
    budgets.drop(call.campaignId);
  } else {
    cache.dropMissing(call.workspaceId);
  }
}

/** The entries of the calls' vouchers that are `voucherId` are read again before the next decision (a guard failed). */
export function markVoucherStale(cache: VoucherStateCache, calls: readonly PartitionCall[], voucherId: string): void {
  for (const call of calls) {
    for (const key of keysOf(call)) {
      const entry = cache.peek(key);
      if (entry?.snapshot?.id === voucherId) entry.stale = true;
    }
  }
}
