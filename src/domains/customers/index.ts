// The customers domain's public surface: its contract and handlers, upsertCustomer() in a transaction and
// for checkouts checkoutCustomerFinder() (the customers an event-loop turn names by sourceId, found or created in one
// statement; sourceIdFinder() does the same for an engine partition's batch) and customerUpserter() (what they cannot
// answer: new customers of a turn in one transaction).
export { customerContract } from './customer.contract.js';
export { customerHandlers } from './customer.handlers.js';
export { checkoutCustomerFinder, customerCreatedPayload, customerUpserter, findCustomerReference, requireCustomer, sourceIdFinder, upsertCustomer } from './customer.service.js';
export { Customer } from './customer.schemas.js';
