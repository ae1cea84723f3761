// Voucher handlers: reads through the queries, every write through the service, and the engine told of each change
// (the partition that owns the code reloads it before its next decision).
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { voucherContract } from './voucher.contract.js';
import { findVoucherByCode, listVouchers } from './voucher.queries.js';
import { createVoucher, deleteVoucher, disableVoucher, enableVoucher, generateVouchers, updateVoucher } from './voucher.service.js';

export const voucherHandlers = implement(voucherContract, {
  async createVoucher({ input, auth, deps }) {
    const voucher = await createVoucher(deps.db, auth.workspaceId, input);
    await deps.engine.voucherChanged(auth.workspaceId, voucher.code);
    return voucher;
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
    const voucher = await updateVoucher(deps.db, auth.workspaceId, code, patch);
    await deps.engine.voucherChanged(auth.workspaceId, code);
    return voucher;
  },
  async disableVoucher({ input, auth, deps }) {
    const voucher = await disableVoucher(deps.db, auth.workspaceId, input.code);
    await deps.engine.voucherChanged(auth.workspaceId, input.code);
    return voucher;
  },
  async enableVoucher({ input, auth, deps }) {
    const voucher = await enableVoucher(deps.db, auth.workspaceId, input.code);
    await deps.engine.voucherChanged(auth.workspaceId, input.code);
    return voucher;
  },
  async deleteVoucher({ input, auth, deps }) {
    await deleteVoucher(deps.db, auth.workspaceId, input.code);
    await deps.engine.voucherChanged(auth.workspaceId, input.code);
  },
  async generateVouchers({ input, auth, deps }) {
    const { id, ...request } = input;
    const generated = await generateVouchers(deps.db, auth.workspaceId, id, request);
    await deps.engine.voucherChanged(auth.workspaceId);
    return generated;
  },
});
