// Customer handlers: reads through the queries, each change through the service in its operation's unit of work.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { customerContract } from './customer.contract.js';
import { findCustomer, listCustomers } from './customer.queries.js';
import { changeCustomer, createCustomer, removeCustomer } from './customer.service.js';

export const customerHandlers = implement(customerContract, {
  async createCustomer({ input, actor, mutate }) {
    const { sourceId, email, name, metadata } = input;
    return mutate((unit) => createCustomer(unit, actor.workspaceId, { sourceId, email, name, metadata }));
  },
  async getCustomer({ input, actor, deps }) {
    const customer = await findCustomer(deps.db, actor.workspaceId, input.id);
    if (!customer) throw problem('not_found', 'no such customer');
    return customer;
  },
  async listCustomers({ input, actor, deps }) {
    return listCustomers(deps.db, deps.cursors, actor.workspaceId, input);
  },
  async updateCustomer({ input, actor, mutate }) {
    const { id, ...patch } = input;
    return mutate((unit) => changeCustomer(unit, actor.workspaceId, id, patch));
  },
  async deleteCustomer({ input, actor, mutate }) {
    await mutate((unit) => removeCustomer(unit, actor.workspaceId, input.id));
  },
});
