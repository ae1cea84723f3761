// Segment handlers.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { segmentContract } from './segment.contract.js';
import { findSegment, listMembers, listSegments } from './segment.queries.js';
import { addSegmentMembers, changeSegment, createSegment, removeSegment, removeSegmentMembers } from './segment.service.js';

const notFound = () => problem('not_found', 'no such segment');

export const segmentHandlers = implement(segmentContract, {
  async createSegment({ input, auth, deps }) {
    const { name, type, conditions, customerIds } = input;
    return createSegment(deps.db, auth.workspaceId, { name, type, conditions, customerIds });
  },
  async getSegment({ input, auth, deps }) {
    const segment = await findSegment(deps.db, auth.workspaceId, input.id);
    if (!segment) throw notFound();
    return segment;
  },
  async listSegments({ input, auth, deps }) {
    return listSegments(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async updateSegment({ input, auth, deps }) {
    const { id, ...patch } = input;
    return changeSegment(deps.db, auth.workspaceId, id, patch);
  },
  async deleteSegment({ input, auth, deps }) {
    await removeSegment(deps.db, auth.workspaceId, input.id);
  },
  async addMembers({ input, auth, deps }) {
    return addSegmentMembers(deps.db, auth.workspaceId, input.id, input.customerIds);
  },
  async removeMembers({ input, auth, deps }) {
    return removeSegmentMembers(deps.db, auth.workspaceId, input.id, input.customerIds);
  },
  async listMembers({ input, auth, deps }) {
    if (!(await findSegment(deps.db, auth.workspaceId, input.id))) throw notFound();
    const { id, ...page } = input;
    return listMembers(deps.db, deps.cursors, auth.workspaceId, id, page);
  },
});
