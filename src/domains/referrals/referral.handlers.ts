// Referral handlers: a referrer's code (found again, or made from the program's template under the referrer's lock),
// its counts, and the conversions the engine records at checkout.
import { randomBytes } from 'node:crypto';
import { existing, implement } from '../../contract/handler.js';
import { problem, ProblemError } from '../../contract/problems.js';
import { findCustomerReference, requireCustomer } from '../customers/index.js';
import { insertVoucher } from '../vouchers/index.js';
import { applyVoucherTemplate } from '../../checkout/voucher-template.rules.js';
import { findDefaultCurrency } from '../workspaces/index.js';
import { referralContract } from './referral.contract.js';
import {
  findConversion,
  findReferralCode,
  findReferralProgram,
  findReferrerCode,
  listConversions,
  listCustomerCodes,
  lockReferrer,
  markReferrer,
} from './referral.queries.js';
import type { ReferralCode } from './referral.schemas.js';

const CODE_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

function referralCode(): string {
  return 'REF-' + [...randomBytes(8)].map((b) => CODE_CHARS[b % CODE_CHARS.length]).join('');
}

/** Thrown inside the unit of work when the referrer's code exists after all (a racing first ask): nothing commits. */
class FoundCode extends Error {
  constructor(readonly code: ReferralCode) {
    super('the referrer has a code');
  }
}

export const referralHandlers = implement(referralContract, {
  async createCode({ input, actor, deps, mutate }) {
    const workspaceId = actor.workspaceId;
    const program = await findReferralProgram(deps.db, workspaceId, input.id);
    if (!program) throw problem('not_found', 'no such referral program');
    const known = await findCustomerReference(deps.db, workspaceId, input.customer);
    const found = known && (await findReferrerCode(deps.db, workspaceId, program.id, known.id));
    if (found) return existing(found);
    try {
      const created = await mutate(async ({ tx, record, emit }) => {
        const referrerId = await requireCustomer(tx, workspaceId, input.customer);
        await lockReferrer(tx, workspaceId, referrerId);
        const again = await findReferrerCode(tx, workspaceId, program.id, referrerId);
        if (again) throw new FoundCode(again);
        const cap = program.referral.maxConversionsPerReferrer;
        const template = applyVoucherTemplate(cap !== undefined ? { redemptionLimit: cap } : {}, program, {
          defaultCurrency: await findDefaultCurrency(tx, workspaceId),
          path: 'campaign.voucher',
        });
        if (!template.ok) throw new ProblemError('invalid_request', "the program's voucher template cannot make a referral code", { errors: template.errors });
        const voucher = await insertVoucher(tx, workspaceId, program.id, input.code ?? referralCode(), template.fields);
        if (!voucher) throw problem('conflict', `a voucher with code ${JSON.stringify(input.code)} exists in this workspace`);
        await markReferrer(tx, voucher.id, referrerId);
        const code = (await findReferrerCode(tx, workspaceId, program.id, referrerId))!;
        record({ resourceType: 'referral_code', resourceId: voucher.id, after: code });
        emit('referral.code.created', { code: code.code, programId: program.id, referrerCustomerId: referrerId });
        return code;
      });
      await deps.engine.voucherChanged(workspaceId, created.code);
      return created;
    } catch (error) {
      if (error instanceof FoundCode) return existing(error.code);
      throw error;
    }
  },
  async getCode({ input, actor, deps }) {
    const code = await findReferralCode(deps.db, actor.workspaceId, input.code);
    if (!code) throw problem('not_found', 'no such referral code');
    return code;
  },
  async listCustomerCodes({ input, actor, deps }) {
    if (!(await findCustomerReference(deps.db, actor.workspaceId, { id: input.id }))) throw problem('not_found', 'no such customer');
    return { data: await listCustomerCodes(deps.db, actor.workspaceId, input.id) };
  },
  async listConversions({ input, actor, deps }) {
    const { id, ...page } = input;
    if (!(await findReferralProgram(deps.db, actor.workspaceId, id))) throw problem('not_found', 'no such referral program');
    return listConversions(deps.db, deps.cursors, actor.workspaceId, id, page);
  },
  async getConversion({ input, actor, deps }) {
    const conversion = await findConversion(deps.db, actor.workspaceId, input.id);
    if (!conversion) throw problem('not_found', 'no such conversion');
    return conversion;
  },
});
