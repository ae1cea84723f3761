// Segment handlers: reads through the queries, each change through the service in its operation's unit of work.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { segmentContract } from './segment.contract.js';
import { findSegment, listMembers, listSegments } from './segment.queries.js';
import { addSegmentMembers, changeSegment, createSegment, removeSegment, removeSegmentMembers } from './segment.service.js';

const notFound = () => problem('not_found', 'no such segment');

export const segmentHandlers = implement(segmentContract, {
  async createSegment({ input, actor, mutate }) {
    const { name, type, conditions, customerIds } = input;
    return mutate((unit) => createSegment(unit, actor.workspaceId, { name, type, conditions, customerIds }));
  },
  async getSegment({ input, actor, deps }) {
    const segment = await findSegment(deps.db, actor.workspaceId, input.id);
    if (!segment) throw notFound();
    return segment;
  },
  async listSegments({ input, actor, deps }) {
    return listSegments(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async updateSegment({ input, actor, mutate }) {
    const { id, ...patch } = input;
    return mutate((unit) => changeSegment(unit, actor.workspaceId, id, patch));
  },
  async deleteSegment({ input, actor, mutate }) {
    await mutate((unit) => removeSegment(unit, actor.workspaceId, input.id));
  },
  async addMembers({ input, actor, mutate }) {
    return mutate((unit) => addSegmentMembers(unit, actor.workspaceId, input.id, input.customerIds));
  },
  async removeMembers({ input, actor, mutate }) {
    return mutate((unit) => removeSegmentMembers(unit, actor.workspaceId, input.id, input.customerIds));
  },
  async listMembers({ input, actor, deps }) {
    if (!(await findSegment(deps.db, actor.workspaceId, input.id))) throw notFound();
    const { id, ...page } = input;
    return listMembers(deps.db, deps.cursors, actor.workspaceId, id, page);
  },
});
