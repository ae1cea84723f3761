// The segments domain's public surface: its contract and handlers, the customer-write hook that keeps AUTO
// memberships current, and loadCustomerFacts(), what a checkout reads of its customer for validation rules.
import DataLoader from 'dataloader';
import type { Pool, Sql } from '../../platform/database.js';
import type { CustomerFacts } from '../rules/index.js';
import { findCustomerFacts, findCustomerFactsMany, type CustomerFactsLookup, type CustomerLookup } from './segment.queries.js';

export { customerFactsSelect, toCustomerFacts, type CustomerFactsRow, type CustomerLookup } from './segment.queries.js';

export { segmentContract } from './segment.contract.js';
export { segmentHandlers } from './segment.handlers.js';
export { Segment } from './segment.schemas.js';
export { awaitSegmentComputations, refreshCustomerSegments } from './segment.service.js';

/**
 * A customer's facts for rules, found by id, sourceId or email: its fields, metadata and the ids of every segment it
 * is in; one statement (what a checkout's redemption reads of its customer).
 */
export async function loadCustomerFacts(db: Sql, workspaceId: string, ref: CustomerLookup): Promise<CustomerFacts | undefined> {
  return findCustomerFacts(db, workspaceId, ref);
}

// One loader per pool: the lookups of every request read in one event-loop turn go out together when the turn ends.
const coalescers = new WeakMap<Pool, DataLoader<CustomerFactsLookup, CustomerFacts | undefined>>();

/**
 * loadCustomerFacts outside a transaction, for checkouts: the lookups asked for in one event-loop turn (the requests
 * read from many connections at once under load) are one statement per kind of lookup, not one each. Should that
 * statement fail, each lookup is read again alone, so that one bad value fails only its own request.
 */
export function loadCustomerFactsSoon(db: Pool, workspaceId: string, ref: CustomerLookup): Promise<CustomerFacts | undefined> {
  let loader = coalescers.get(db);
  if (!loader) {
    loader = new DataLoader<CustomerFactsLookup, CustomerFacts | undefined>(
      (lookups) =>
        findCustomerFactsMany(db, lookups).catch(() =>
          Promise.all(lookups.map((l) => findCustomerFacts(db, l.workspaceId, l.ref).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))))),
        ),
      { cache: false, maxBatchSize: 200, batchScheduleFn: (run) => setImmediate(run) },
    );
    coalescers.set(db, loader);
  }
  return loader.load({ workspaceId, ref });
}
