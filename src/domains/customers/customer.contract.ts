// Customer operations.
import { z } from 'zod';
import { listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { CreateCustomerBody, Customer, ListCustomersQuery, UpdateCustomerBody } from './customer.schemas.js';

const tags = ['Customers'];
const params = z.object({ id: Uuid });

export const customerContract = {
  createCustomer: defineOperation({
    name: 'customers.create',
    method: 'post',
    path: '/customers',
    scope: 'customers:write',
    summary: 'Create a customer',
    description: 'Emits `customer.created`. A sourceId that exists in the workspace is a 409 `conflict`.',
    tags,
    body: CreateCustomerBody,
    output: Customer,
    successStatus: 201,
  }),
  getCustomer: defineOperation({
    name: 'customers.get',
    method: 'get',
    path: '/customers/{id}',
    scope: 'customers:read',
    summary: 'Get a customer',
    tags,
    params,
    output: Customer,
  }),
  listCustomers: defineOperation({
    name: 'customers.list',
    method: 'get',
    path: '/customers',
    scope: 'customers:read',
    summary: 'List customers, newest first; filter by sourceId or email',
    tags,
    query: ListCustomersQuery,
    output: listEnvelope(Customer, 'CustomerList'),
  }),
  updateCustomer: defineOperation({
    name: 'customers.update',
    method: 'patch',
    path: '/customers/{id}',
    scope: 'customers:write',
    summary: 'Update a customer',
    description: 'Fields left out are kept; `null` clears sourceId, email or name; metadata is replaced. A taken sourceId is a 409.',
    tags,
    params,
    body: UpdateCustomerBody,
    output: Customer,
  }),
  deleteCustomer: defineOperation({
    name: 'customers.delete',
    method: 'delete',
    path: '/customers/{id}',
    scope: 'customers:write',
    summary: 'Delete a customer',
    tags,
    params,
  }),
};
