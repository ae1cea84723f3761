// The segments domain's public surface: its contract and handlers, the customer-write hooks that keep AUTO
// memberships current, and a customer's facts for validation rules: loadCustomerFacts() in a transaction,
// customerFactsLoader() for checkouts (one statement per event-loop turn).
import type { Pool, Sql } from '../../platform/database.js';
import { turnBatched } from '../../platform/turn-batches.js';
import type { CustomerFacts } from '../../checkout/condition.rules.js';
import { findCustomerFacts, findCustomerFactsMany, type CustomerFactsLookup, type CustomerLookup } from './segment.queries.js';

export { customerFactsBySourceIdSql, customerFactsSelect, isAutoSegmentsFound, noAutoSegmentsCheck, toCustomerFacts, type CustomerFactsLookup, type CustomerFactsRow, type CustomerLookup } from './segment.queries.js';

export { segmentContract } from './segment.contract.js';
export { segmentHandlers } from './segment.handlers.js';
export { Segment } from './segment.schemas.js';
export { awaitSegmentComputations, refreshCustomerSegments, refreshCustomersSegments } from './segment.service.js';

/**
 * A customer's facts for rules, found by id, sourceId or email: its fields, metadata and the ids of every segment it
 * is in; one statement (what a checkout's redemption reads of its customer).
 */
export async function loadCustomerFacts(db: Sql, workspaceId: string, ref: CustomerLookup): Promise<CustomerFacts | undefined> {
  return findCustomerFacts(db, workspaceId, ref);
}

/**
 * loadCustomerFacts outside a transaction, for checkouts: the lookups asked for in one event-loop turn go out as one
 * statement per kind of lookup, not one each (a value PostgreSQL refuses fails only its own lookup). One per pool.
 */
export function customerFactsLoader(db: Pool): (lookup: CustomerFactsLookup) => Promise<CustomerFacts | undefined> {
  return turnBatched(
    (lookups) => findCustomerFactsMany(db, lookups),
    ({ workspaceId, ref }) => findCustomerFacts(db, workspaceId, ref),
  );
}
