// Publication handlers: reads through the queries, publishing through the service, then the engine told of the code.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { publicationContract } from './publication.contract.js';
import { findPublication, listPublications } from './publication.queries.js';
import { publishVoucher } from './publication.service.js';

export const publicationHandlers = implement(publicationContract, {
  async createPublication({ input, actor, deps, mutate }) {
    const publication = await mutate((unit) => publishVoucher(unit, actor.workspaceId, input));
    // After the commit: the partition owning the code reloads it and sees whom it is assigned to.
    if (!publication.existing) await deps.engine.voucherChanged(actor.workspaceId, publication.voucher.code);
    return publication;
  },
  async getPublication({ input, actor, deps }) {
    const publication = await findPublication(deps.db, actor.workspaceId, input.id);
    if (!publication) throw problem('not_found', 'no such publication');
    return publication;
  },
  async listPublications({ input, actor, deps }) {
    return listPublications(deps.db, deps.cursors, actor.workspaceId, input);
  },
});
