// Customer handlers.
import { implement } from '../../contract/handler.js';
import { problem } from '../../contract/problems.js';
import { customerContract } from './customer.contract.js';
import { findCustomer, listCustomers } from './customer.queries.js';
import { changeCustomer, createCustomer, removeCustomer } from './customer.service.js';

export const customerHandlers = implement(customerContract, {
  async createCustomer({ input, auth, deps }) {
    const { sourceId, email, name, metadata } = input;
    return createCustomer(deps.db, auth.workspaceId, { sourceId, email, name, metadata });
  },
  async getCustomer({ input, auth, deps }) {
    const customer = await findCustomer(deps.db, auth.workspaceId, input.id);
    if (!customer) throw problem('not_found', 'no such customer');
    return customer;
  },
  async listCustomers({ input, auth, deps }) {
    return listCustomers(deps.db, deps.cursors, auth.workspaceId, input);
  },
  async updateCustomer({ input, auth, deps }) {
    const { id, ...patch } = input;
    return changeCustomer(deps.db, auth.workspaceId, id, patch);
  },
  async deleteCustomer({ input, auth, deps }) {
    if (!(await removeCustomer(deps.db, auth.workspaceId, input.id))) throw problem('not_found', 'no such customer');
  },
});
