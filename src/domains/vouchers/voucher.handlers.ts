// Voucher handlers: reads through the queries, every write through the service.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { voucherContract } from './voucher.contract.js';
import { findVoucherByCode, listVouchers } from './voucher.queries.js';
import { createVoucher, deleteVoucher, disableVoucher, enableVoucher, generateVouchers, updateVoucher } from './voucher.service.js';

export const voucherHandlers = implement(voucherContract, {
  async createVoucher({ input, auth, deps }) {
    return createVoucher(deps.db, auth.workspaceId, input);
  },
  async listVouchers({ input, auth, deps }) {
    return listVouchers(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async getVoucher({ input, auth, deps }) {
    const voucher = await findVoucherByCode(deps.db, auth.workspaceId, input.code);
    if (!voucher) throw problem('not_found', 'no such voucher');
    return voucher;
  },
  async updateVoucher({ input, auth, deps }) {
    const { code, ...patch } = input;
    return updateVoucher(deps.db, auth.workspaceId, code, patch);
  },
  async disableVoucher({ input, auth, deps }) {
    return disableVoucher(deps.db, auth.workspaceId, input.code);
  },
  async enableVoucher({ input, auth, deps }) {
    return enableVoucher(deps.db, auth.workspaceId, input.code);
  },
  async deleteVoucher({ input, auth, deps }) {
    await deleteVoucher(deps.db, auth.workspaceId, input.code);
  },
  async generateVouchers({ input, auth, deps }) {
    const { id, ...request } = input;
    return generateVouchers(deps.db, auth.workspaceId, id, request);
  },
});
