// Voucher handlers: reads through the queries, every write through the service in the operation's unit of work, and
// the engine told of each change after its commit (the partition that owns the code reloads it before its next decision).
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { voucherContract } from './voucher.contract.js';
import { findVoucherByCode, listVouchers } from './voucher.queries.js';
import {
  createVoucher,
  deleteVoucher,
  disableVoucher,
  enableVoucher,
  generateVouchers,
  refreshStatisticsAfterGeneration,
  updateVoucher,
} from './voucher.service.js';

export const voucherHandlers = implement(voucherContract, {
  async createVoucher({ input, actor, deps, mutate }) {
    const voucher = await mutate((unit) => createVoucher(unit, actor.workspaceId, input));
    await deps.engine.voucherChanged(actor.workspaceId, voucher.code);
    return voucher;
  },
  async listVouchers({ input, actor, deps }) {
    return listVouchers(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async getVoucher({ input, actor, deps }) {
    const voucher = await findVoucherByCode(deps.db, actor.workspaceId, input.code);
    if (!voucher) throw problem('not_found', 'no such voucher');
    return voucher;
  },
  async updateVoucher({ input, actor, deps, mutate }) {
    const { code, ...patch } = input;
    const voucher = await mutate((unit) => updateVoucher(unit, actor.workspaceId, code, patch));
    await deps.engine.voucherChanged(actor.workspaceId, code);
    return voucher;
  },
  async disableVoucher({ input, actor, deps, mutate }) {
    const voucher = await mutate((unit) => disableVoucher(unit, actor.workspaceId, input.code));
    await deps.engine.voucherChanged(actor.workspaceId, input.code);
    return voucher;
  },
  async enableVoucher({ input, actor, deps, mutate }) {
    const voucher = await mutate((unit) => enableVoucher(unit, actor.workspaceId, input.code));
    await deps.engine.voucherChanged(actor.workspaceId, input.code);
    return voucher;
  },
  async deleteVoucher({ input, actor, deps, mutate }) {
    await mutate((unit) => deleteVoucher(unit, actor.workspaceId, input.code));
    await deps.engine.voucherChanged(actor.workspaceId, input.code);
  },
  async generateVouchers({ input, actor, deps, mutate }) {
    const { id, ...request } = input;
    const generated = await mutate((unit) => generateVouchers(unit, actor.workspaceId, id, request));
    await refreshStatisticsAfterGeneration(deps.db, generated);
    await deps.engine.voucherChanged(actor.workspaceId);
    return generated;
  },
});
