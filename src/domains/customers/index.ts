// The customers domain's public surface: its contract and handlers, and upsertCustomer() for the redemption engine.
export { customerContract } from './customer.contract.js';
export { customerHandlers } from './customer.handlers.js';
export { customerUpserter, findCustomerReference, requireCustomer, upsertCustomer } from './customer.service.js';
export { Customer } from './customer.schemas.js';
