// Redemption use cases: resolve the customer (created when new, with customer.created) for the engine's requests.
// The engine decides and writes; the pipeline made the idempotency claim; this file only prepares the requests.
import { LRUCache } from 'lru-cache';
import type { CustomerReference } from '../../contract/common.schemas.js';
import type { CustomerUse } from '../../contract/engine-port.js';
import type { CheckoutCustomers, StackLimits } from '../../contract/handler.js';
import type { Pool } from '../../platform/database.js';
import { checkoutCustomerFinder, customerUpserter } from '../customers/index.js';
import type { CustomerFacts } from '../../checkout/condition.rules.js';
import { customerUseOf } from '../../checkout/redemption.rules.js';
import { customerFactsLoader } from '../segments/index.js';
import { findStackLimit } from './redemption.queries.js';

const NO_CUSTOMER: CustomerUse = { id: null, given: false };

/** How long a workspace whose customer a batch sent back has its redemptions' customers resolved on the web thread. */
const RESOLVED_HERE_MS = 5_000;

/**
 * The customers checkouts name (see CheckoutCustomers), made once per service at composition. A redemption's customer
 * named by sourceId is found or created in one statement shared with the other requests of the event-loop turn
 * (checkoutCustomerFinder); one by id or email is one indexed read (with its segments), and so is a preview's. Where
 * the one statement cannot answer (AUTO segments, a creation racing), the customer is read, then created in a
 * transaction. A single voucher's redemption (redeemingOne) leaves one named by sourceId alone to the engine's batch,
 * which finds or creates the customers of all its redemptions in one statement; the rest as above where it cannot, and
 * for a few seconds after, the workspace's next ones too (a workspace with AUTO segments would be sent back each time).
 */
export function checkoutCustomers(db: Pool): CheckoutCustomers {
  const facts = customerFactsLoader(db);
  const findOrCreate = checkoutCustomerFinder(db);
  const upsert = customerUpserter(db);
  // Workspaces whose customers a batch could not find or create lately: sent to the engine resolved, not to be sent back.
  const resolvedHere = new LRUCache<string, true>({ max: 10_000, ttl: RESOLVED_HERE_MS });
  const customers: CheckoutCustomers = {
    async preview(workspaceId, ref) {
      return ref ? previewCustomer(ref, await facts({ workspaceId, ref })) : NO_CUSTOMER;
    },
    async redeeming(workspaceId, ref) {
      if (!ref) return NO_CUSTOMER;
      // By sourceId: found or created in one round trip; where that cannot answer, looked up then upserted.
      if (ref.id === undefined && ref.sourceId !== undefined) {
        const customer = await findOrCreate({ workspaceId, ref: { ...ref, sourceId: ref.sourceId } });
        if (customer) return customerUseOf(customer);
      }
      const found = await facts({ workspaceId, ref });
      if (found || ref.id !== undefined || ref.sourceId === undefined) return previewCustomer(ref, found);
      const upserted = await upsert({ workspaceId, ref: { ...ref, sourceId: ref.sourceId } });
      if (!upserted) return { id: null, given: true };
      const { customer, segments } = upserted;
      // Created by this upsert: its segments are those the creating transaction put it in, no need to read them.
      if (segments) return customerUseOf({ ...customer, segments });
      // Created meanwhile by another request: read as any returning customer.
      const created = await facts({ workspaceId, ref: { id: customer.id } });
      return created ? customerUseOf(created) : { id: customer.id, given: true };
    },
    async redeemingOne(workspaceId, ref) {
      if (!ref || ref.id !== undefined || ref.sourceId === undefined || resolvedHere.has(workspaceId)) return customers.redeeming(workspaceId, ref);
      const find = { ...ref, sourceId: ref.sourceId };
      return {
        find,
        async resolve() {
          // The batch could not answer (AUTO segments, most likely): this workspace's next ones are resolved here at once.
          resolvedHere.set(workspaceId, true);
          // By sourceId a customer is always answered (a failed creation leaves it given without an id), never undefined.
          return (await customers.redeeming(workspaceId, find)) ?? { id: null, given: true };
        },
      };
    },
  };
  return customers;
}

/**
 * The customer a request names, from its facts as read (`found`), without creating one: a preview's answer, also for
 * a caller that read the facts in a statement of its own (qualification).
 */
export function previewCustomer(ref: CustomerReference | undefined, found: CustomerFacts | undefined): CustomerUse | undefined {
  if (!ref) return NO_CUSTOMER;
  if (found) return customerUseOf(found);
  if (ref.id !== undefined) return undefined;
  return { id: null, given: true, facts: { segments: [], metadata: ref.metadata ?? {} } };
}

const STACK_LIMIT_TTL_MS = 5_000;

/** The workspaces' stack limits (see StackLimits), made once per service at composition: each read at most every 5 s. */
export function workspaceStackLimits(db: Pool): StackLimits {
  const limits = new Map<string, { limit: number; until: number }>();
  return {
    async of(workspaceId) {
      const cached = limits.get(workspaceId);
      if (cached && cached.until > Date.now()) return cached.limit;
      const limit = await findStackLimit(db, workspaceId);
      if (limits.size > 10_000) limits.clear();
      limits.set(workspaceId, { limit, until: Date.now() + STACK_LIMIT_TTL_MS });
      return limit;
    },
  };
}
