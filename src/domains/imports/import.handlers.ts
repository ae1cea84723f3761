// Bulk import handlers: the two imports (accepted once their body is staged, merged in the background) and the job's status.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { importContract } from './import.contract.js';
import { findImport } from './import.queries.js';
import { acceptImport } from './import.service.js';

export const importHandlers = implement(importContract, {
  async importVouchers(ctx) {
    const { input, actor, deps } = ctx;
    // New codes: any partition that remembered one of them as unknown reads it again.
    return acceptImport(ctx, { kind: 'vouchers', rows: input.rows, format: input.format, campaignId: input.campaignId }, () =>
      deps.engine.voucherChanged(actor.workspaceId),
    );
  },
  async importCustomers(ctx) {
    const { input } = ctx;
    return acceptImport(ctx, { kind: 'customers', rows: input.rows, format: input.format }, async () => undefined);
  },
  async getImport({ input, actor, deps }) {
    const found = await findImport(deps.db, actor.workspaceId, input.id);
    if (!found) throw problem('not_found', 'no such import');
    return found;
  },
});
