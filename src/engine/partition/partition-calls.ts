// What a partition call names: its codes, their cache keys, its customer. Shared by the runtime's queue and loaders.
import type { PartitionCall } from '../messages.js';
import { voucherKey } from './voucher-state-cache.js';

export function codesOf(call: PartitionCall): string[] {
  switch (call.type) {
    case 'validate':
    case 'redeem':
    case 'rollback':
    case 'adjust':
    case 'releaseSession':
      return [call.code];
    case 'snapshot':
      return call.codes;
    case 'hold':
      return call.items.map((i) => i.code);
    case 'stack':
      return call.vouchers.map((v) => v.code);
    default:
      return [];
  }
}

export function keysOf(call: PartitionCall): string[] {
  return 'workspaceId' in call ? codesOf(call).map((code) => voucherKey(call.workspaceId, code)) : [];
}

export function customerOf(call: PartitionCall): string | null {
  return 'customer' in call ? call.customer.id : null;
}
