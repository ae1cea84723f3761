// The customers domain's public surface: its contract and handlers, upsertCustomer() in a transaction and
// customerUpserter() for checkouts (the new customers of an event-loop turn in one transaction).
export { customerContract } from './customer.contract.js';
export { customerHandlers } from './customer.handlers.js';
export { customerCreatedPayload, customerUpserter, findCustomerReference, requireCustomer, upsertCustomer } from './customer.service.js';
export { Customer } from './customer.schemas.js';
