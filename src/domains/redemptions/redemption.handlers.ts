// Redemption handlers: prepare the engine's requests (customer, idempotency claim), read models straight from SQL.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { refusal, refusalFields } from './redemption.rules.js';
import { redemptionContract } from './redemption.contract.js';
import { findRedemption, findVoucherIdentity, listLedgerEntries, listRedemptions } from './redemption.queries.js';
import { idempotencyClaim, resolveCustomer, workspaceStackLimit } from './redemption.service.js';

const customerNotFound = () => refusalFields(refusal('customer_not_found'));

export const redemptionHandlers = implement(redemptionContract, {
  async validateVoucher({ input, auth, deps }) {
    const customer = await resolveCustomer(deps.db, auth.workspaceId, input.customer, false);
    if (!customer) return { valid: false, ...customerNotFound() };
    return deps.engine.validate({ workspaceId: auth.workspaceId, code: input.code, order: input.order, amount: input.amount, customer });
  },
  async redeemVoucher({ input, auth, deps }) {
    const { code, ...body } = input;
    const customer = await resolveCustomer(deps.db, auth.workspaceId, input.customer, true);
    if (!customer) return { ok: false, ...customerNotFound() };
    return deps.engine.redeem({
      workspaceId: auth.workspaceId,
      code,
      order: input.order,
      amount: input.amount,
      customer,
      metadata: input.metadata,
      idempotency: idempotencyClaim('redemptions.redeem', code, body),
    });
  },
  async redeemStack({ input, auth, deps }) {
    const customer = await resolveCustomer(deps.db, auth.workspaceId, input.customer, true);
    if (!customer) {
      return { ok: false, ...customerNotFound(), results: input.vouchers.map((v) => ({ ...(v.tierId !== undefined ? { tierId: v.tierId } : { voucherCode: v.code }), ok: false, code: 'skipped' as const, priority: 0 })) };
    }
    return deps.engine.redeemStack({
      workspaceId: auth.workspaceId,
      vouchers: input.vouchers,
      order: input.order,
      customer,
      metadata: input.metadata,
      idempotency: idempotencyClaim('redemptions.stack', '', input)!,
      stackLimit: await workspaceStackLimit(deps.db, auth.workspaceId),
    });
  },
  async rollbackRedemption({ input, auth, deps }) {
    const { id, ...body } = input;
    const redemption = await findRedemption(deps.db, auth.workspaceId, id);
    if (!redemption) throw problem('not_found', 'no such redemption');
    return deps.engine.rollback({
      workspaceId: auth.workspaceId,
      code: redemption.voucherCode,
      redemptionId: id,
      campaignId: redemption.campaignId,
      reason: input.reason,
      idempotency: idempotencyClaim('redemptions.rollback', id, body),
    });
  },
  async getRedemption({ input, auth, deps }) {
    const redemption = await findRedemption(deps.db, auth.workspaceId, input.id);
    if (!redemption) throw problem('not_found', 'no such redemption');
    return redemption;
  },
  async listRedemptions({ input, auth, deps }) {
    return listRedemptions(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async listTransactions({ input, auth, deps }) {
    const voucher = await findVoucherIdentity(deps.db, auth.workspaceId, input.code);
    if (!voucher) throw problem('not_found', 'no such voucher');
    return listLedgerEntries(deps.db, deps.cursors, auth.workspaceId, voucher.id, input);
  },
  async adjustBalance({ input, auth, deps }) {
    return deps.engine.adjustBalance({ workspaceId: auth.workspaceId, code: input.code, amount: input.amount, entryType: input.type });
  },
});
