// Redemption handlers: prepare the engine's requests (customer, the pipeline's idempotency claim, audit trail), read
// models straight from SQL.
import { randomUUID } from 'node:crypto';
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { hasScope } from '../../contract/scopes.js';
import { refusal, refusalFields } from '../../checkout/redemption.rules.js';
import { redemptionContract } from './redemption.contract.js';
import { findRedemption, findVoucherIdentity, listLedgerEntries, listRedemptions } from './redemption.queries.js';

const customerNotFound = () => refusalFields(refusal('customer_not_found'));
const skippedResults = (vouchers: ReadonlyArray<{ code?: string | undefined; tierId?: string | undefined }>) =>
  vouchers.map((v) => ({ ...(v.tierId !== undefined ? { tierId: v.tierId } : { voucherCode: v.code }), ok: false, code: 'skipped' as const, priority: 0 }));

export const redemptionHandlers = implement(redemptionContract, {
  async validateVoucher({ input, actor, deps }) {
    // A reservation keeps a use from every other checkout: a key that may only read cannot make one.
    if (input.session && !hasScope(actor.scopes, 'redemptions:write')) {
      throw problem('forbidden', 'a validation session reserves the voucher: it needs the redemptions:write scope');
    }
    const customer = await deps.customers.preview(actor.workspaceId, input.customer);
    if (!customer) return { valid: false as const, ...customerNotFound() };
    const session = input.session && { key: input.session.key ?? randomUUID(), ttlSeconds: input.session.ttlSeconds };
    return deps.engine.validate({ workspaceId: actor.workspaceId, code: input.code, order: input.order, amount: input.amount, customer, session });
  },
  async redeemVoucher({ input, actor, deps, idempotency }) {
    const { code } = input;
    const customer = await deps.customers.redeemingOne(actor.workspaceId, input.customer);
    if (!customer) return { ok: false as const, ...customerNotFound() };
    return deps.engine.redeem({
      workspaceId: actor.workspaceId,
      code,
      order: input.order,
      amount: input.amount,
      customer,
      metadata: input.metadata,
      idempotency,
      session: input.session,
    });
  },
  async redeemStack({ input, actor, deps, idempotency }) {
    const customer = await deps.customers.redeeming(actor.workspaceId, input.customer);
    if (!customer) {
      return { ok: false as const, ...customerNotFound(), results: skippedResults(input.vouchers) };
    }
    return deps.engine.redeemStack({
      workspaceId: actor.workspaceId,
      vouchers: input.vouchers,
      order: input.order,
      customer,
      metadata: input.metadata,
      // The stack's idempotencyKey is required by its schema: there is always a claim.
      idempotency: idempotency!,
      stackLimit: await deps.stackLimits.of(actor.workspaceId),
    });
  },
  async validateStack({ input, actor, deps }) {
    // Named as the stack names it, but never created: a new customer is previewed as the new customer it would be.
    const customer = await deps.customers.preview(actor.workspaceId, input.customer);
    if (!customer) return { ok: false as const, ...customerNotFound(), results: skippedResults(input.vouchers) };
    const stackLimit = await deps.stackLimits.of(actor.workspaceId);
    return deps.engine.previewStack({ workspaceId: actor.workspaceId, vouchers: input.vouchers, order: input.order, customer, stackLimit });
  },
  async releaseSession({ input, actor, deps, auditTrail }) {
    await deps.engine.releaseSession({ workspaceId: actor.workspaceId, code: input.code, key: input.key, audit: auditTrail() });
  },
  async rollbackRedemption({ input, actor, deps, auditTrail, idempotency }) {
    const { id } = input;
    const redemption = await findRedemption(deps.db, actor.workspaceId, id);
    if (!redemption) throw problem('not_found', 'no such redemption');
    return deps.engine.rollback({
      workspaceId: actor.workspaceId,
      code: redemption.voucherCode,
      redemptionId: id,
      campaignId: redemption.campaignId,
      reason: input.reason,
      idempotency,
      audit: auditTrail(),
    });
  },
  async getRedemption({ input, actor, deps }) {
    const redemption = await findRedemption(deps.db, actor.workspaceId, input.id);
    if (!redemption) throw problem('not_found', 'no such redemption');
    return redemption;
  },
  async listRedemptions({ input, actor, deps }) {
    return listRedemptions(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async listTransactions({ input, actor, deps }) {
    const voucher = await findVoucherIdentity(deps.db, actor.workspaceId, input.code);
    if (!voucher) throw problem('not_found', 'no such voucher');
    return listLedgerEntries(deps.db, deps.cursors, actor.workspaceId, voucher.id, input);
  },
  async adjustBalance({ input, actor, deps, auditTrail }) {
    return deps.engine.adjustBalance({ workspaceId: actor.workspaceId, code: input.code, amount: input.amount, entryType: input.type, audit: auditTrail() });
  },
});
