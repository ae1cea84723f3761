// Customer use cases: create/update/delete in their operation's unit of work (sourceId conflict mapped to 409,
// customer.created written in the creating transaction), and upsertCustomer() for redemptions. Every create and
// update re-evaluates the workspace's AUTO segments for the customer in the same transaction.
import type { CustomerFacts } from '../../checkout/condition.rules.js';
import type { CustomerReference } from '../../contract/common.schemas.js';
import type { UnitOfWork } from '../../contract/handler.js';
import { invalidField, problem } from '../../contract/problems.js';
import { sqlState, UNIQUE_VIOLATION, withTransaction, type Pool, type Sql } from '../../platform/database.js';
import { turnBatched } from '../../platform/turn-batches.js';
import { recordEvent, recordEvents } from '../events/index.js';
import { awaitSegmentComputations, refreshCustomerSegments, refreshCustomersSegments } from '../segments/index.js';
import {
  createCustomersWithoutSegments,
  deleteCustomer,
  findCustomer,
  findCustomerByEmail,
  findCustomerBySourceId,
  findCustomersBySourceIds,
  findOrCreateCustomerFacts,
  insertCustomer,
  insertCustomerIfAbsent,
  insertCustomersIfAbsent,
  lockCustomer,
  updateCustomer,
} from './customer.queries.js';
import type { CreateCustomerBody, Customer, UpdateCustomerBody } from './customer.schemas.js';

function isSourceIdConflict(error: unknown): boolean {
  return (
    sqlState(error) === UNIQUE_VIOLATION &&
    (error as { constraint?: unknown }).constraint === 'customers_source_id_unique'
  );
}

/** A rejection handler: the sourceId's unique violation as a 409, anything else as it was. */
function mapSourceIdConflict(sourceId: string | null | undefined) {
  return (error: unknown): never => {
    if (isSourceIdConflict(error)) throw problem('conflict', `a customer with sourceId ${JSON.stringify(sourceId)} exists in this workspace`);
    throw error;
  };
}

/** The payload of a customer.created event (checkouts, the API and the bulk import write the same). */
export function customerCreatedPayload(customer: Pick<Customer, 'id' | 'sourceId' | 'email'>): Record<string, unknown> {
  return {
    customerId: customer.id,
    ...(customer.sourceId !== null ? { sourceId: customer.sourceId } : {}),
    ...(customer.email !== null ? { email: customer.email } : {}),
  };
}

async function recordCustomerCreated(tx: Sql, workspaceId: string, customer: Customer): Promise<void> {
  await recordEvent(tx, workspaceId, 'customer.created', customerCreatedPayload(customer));
}

/** A customer as segment conditions see it, before any membership. */
function withoutSegments({ id, sourceId, email, name, metadata, createdAt }: Customer) {
  return { id, sourceId, email, name, metadata, createdAt, segments: [] };
}

function refreshSegments(tx: Sql, workspaceId: string, customer: Customer): Promise<void> {
  return refreshCustomerSegments(tx, workspaceId, withoutSegments(customer));
}

const RESOURCE = 'customer';
const notFound = () => problem('not_found', 'no such customer');

export async function createCustomer({ tx, record }: UnitOfWork, workspaceId: string, fields: CreateCustomerBody): Promise<Customer> {
  const customer = await insertCustomer(tx, workspaceId, fields).catch(mapSourceIdConflict(fields.sourceId));
  await recordCustomerCreated(tx, workspaceId, customer);
  await refreshSegments(tx, workspaceId, customer);
  record({ resourceType: RESOURCE, resourceId: customer.id, after: customer });
  return customer;
}

export async function changeCustomer({ tx, record }: UnitOfWork, workspaceId: string, id: string, patch: UpdateCustomerBody): Promise<Customer> {
  const before = await lockCustomer(tx, workspaceId, id);
  if (!before) throw notFound();
  const customer = await updateCustomer(tx, workspaceId, id, patch).catch(mapSourceIdConflict(patch.sourceId));
  if (!customer) throw notFound();
  await refreshSegments(tx, workspaceId, customer);
  record({ resourceType: RESOURCE, resourceId: id, before, after: customer });
  return customer;
}

/** Deletes the customer (its segment memberships go with it), after any running segment computation. */
export async function removeCustomer({ tx, record }: UnitOfWork, workspaceId: string, id: string): Promise<void> {
  await awaitSegmentComputations(tx, workspaceId);
  const before = await deleteCustomer(tx, workspaceId, id);
  if (!before) throw notFound();
  record({ resourceType: RESOURCE, resourceId: id, before });
}

// A row that conflicted but is gone by the time we read it was deleted concurrently: insert again, a few times at most.
const UPSERT_ATTEMPTS = 3;

/**
 * The customer a redemption names, inside the caller's transaction: by `id` (undefined when not in this workspace),
 * else by `sourceId`, created with customer.created when unknown. Concurrent upserts of one new sourceId create one
 * customer and one event: the losers' ON CONFLICT waits for the winner's commit, then reads its row.
 */
export async function upsertCustomer(tx: Sql, workspaceId: string, ref: CustomerReference): Promise<Customer | undefined> {
  if (ref.id !== undefined) return findCustomer(tx, workspaceId, ref.id);
  const sourceId = ref.sourceId;
  if (sourceId === undefined) return undefined;
  for (let attempt = 0; attempt < UPSERT_ATTEMPTS; attempt++) {
    const created = await insertCustomerIfAbsent(tx, workspaceId, { ...ref, sourceId });
    if (created) {
      await recordCustomerCreated(tx, workspaceId, created);
      await refreshSegments(tx, workspaceId, created);
      return created;
    }
    const existing = await findCustomerBySourceId(tx, workspaceId, sourceId);
    if (existing) return existing;
  }
  throw new Error(`customer ${sourceId} kept disappearing during upsert`);
}

/** One of many upserts by sourceId (customerUpserter): the workspace and the customer's fields. */
export interface CustomerUpsert {
  workspaceId: string;
  ref: CustomerReference & { sourceId: string };
}

/**
 * A customer an upsert by sourceId answers; `segments` when this upsert created it: every segment it is in (its AUTO
 * segments, decided in the creating transaction), so a checkout need not read it again.
 */
export interface UpsertedCustomer {
  customer: Customer;
  segments?: readonly string[];
}

/**
 * upsertCustomer for many references by sourceId, in the caller's transaction: workspace by workspace (in id order),
 * see upsertWorkspaceCustomers; each reference's customer in order.
 */
export async function upsertCustomersBySourceId(tx: Sql, upserts: readonly CustomerUpsert[]): Promise<UpsertedCustomer[]> {
  const found = new Map<string, Map<string, UpsertedCustomer>>();
  for (const workspaceId of [...new Set(upserts.map((u) => u.workspaceId))].sort()) {
    const refs = upserts.filter((u) => u.workspaceId === workspaceId).map((u) => u.ref);
    found.set(workspaceId, await upsertWorkspaceCustomers(tx, workspaceId, refs));
  }
  return upserts.map((u) => found.get(u.workspaceId)!.get(u.ref.sourceId)!);
}

/** The first reference of each sourceId (it gives a new customer's fields), in the order first named. */
function firstBySourceId(refs: ReadonlyArray<CustomerUpsert['ref']>): Map<string, CustomerUpsert['ref']> {
  const first = new Map<string, CustomerUpsert['ref']>();
  for (const ref of refs) if (!first.has(ref.sourceId)) first.set(ref.sourceId, ref);
  return first;
}

/**
 * The customers of one workspace these references name, by sourceId: the new ones inserted in one statement with
 * their customer.created events and AUTO segments (the first reference of a sourceId gives its fields), the others read.
 */
async function upsertWorkspaceCustomers(tx: Sql, workspaceId: string, refs: ReadonlyArray<CustomerUpsert['ref']>): Promise<Map<string, UpsertedCustomer>> {
  const found = new Map<string, UpsertedCustomer>();
  const wanted = firstBySourceId(refs);
  for (let attempt = 0; attempt < UPSERT_ATTEMPTS && wanted.size > 0; attempt++) {
    const created = await insertCustomersIfAbsent(tx, workspaceId, [...wanted.values()]);
    if (created.length > 0) {
      await recordEvents(tx, created.map((c) => ({ workspaceId, type: 'customer.created' as const, payload: customerCreatedPayload(c) })));
      const segments = await refreshCustomersSegments(tx, workspaceId, created.map(withoutSegments));
      for (const c of created) {
        found.set(c.sourceId!, { customer: c, segments: segments.get(c.id) ?? [] });
        wanted.delete(c.sourceId!);
      }
    }
    const existing = wanted.size === 0 ? [] : await findCustomersBySourceIds(tx, workspaceId, [...wanted.keys()]);
    for (const c of existing) {
      found.set(c.sourceId!, { customer: c });
      wanted.delete(c.sourceId!);
    }
  }
  if (wanted.size > 0) throw new Error(`customers ${[...wanted.keys()].join(', ')} kept disappearing during upsert`);
  return found;
}

/**
 * Creations out at once; the new customers named meanwhile go together in the next one (see turnBatched). One since a
 * creation is one statement (2026-11-29, two alternated pairs of the bench's new-customer row: 2,936, 2,438 req/s
 * against 2,143, 2,036 with two, CPU a request node 229-280 / PostgreSQL 201-228 µs against 349-354 / 279-323).
 */
const CHECKOUT_UPSERTS_IN_FLIGHT = 1;

/** How long a workspace found to have AUTO segments has its new customers created in a transaction straight away. */
const AUTO_SEGMENTS_KEPT_MS = 5_000;

/** The workspaces a checkout's one-statement creation found to have AUTO segments, each for AUTO_SEGMENTS_KEPT_MS. */
class AutoSegmentsMemory {
  private readonly until = new Map<string, number>();

  has(workspaceId: string): boolean {
    return (this.until.get(workspaceId) ?? 0) > Date.now();
  }

  remember(workspaceId: string): void {
    if (this.until.size > 10_000) this.until.clear();
    this.until.set(workspaceId, Date.now() + AUTO_SEGMENTS_KEPT_MS);
  }
}

/** A turn's upserts answered workspace by workspace (at once), each answer at its upsert's place. */
async function workspaceByWorkspace<V>(
  upserts: readonly CustomerUpsert[],
  ofWorkspace: (workspaceId: string, theirs: readonly CustomerUpsert[]) => Promise<V[]>,
): Promise<V[]> {
  const answers = new Map<CustomerUpsert, V>();
  await Promise.all(
    [...new Set(upserts.map((u) => u.workspaceId))].map(async (workspaceId) => {
      const theirs = upserts.filter((u) => u.workspaceId === workspaceId);
      (await ofWorkspace(workspaceId, theirs)).forEach((answer, i) => answers.set(theirs[i]!, answer));
    }),
  );
  return upserts.map((u) => answers.get(u)!);
}

/**
 * upsertCustomer by sourceId for checkouts: the upserts asked for in one event-loop turn go together, workspace by
 * workspace. A workspace without AUTO segments (the common case) has its new customers created in one statement with
 * their events (createCustomersWithoutSegments: one round trip); one with AUTO segments in a transaction that evaluates
 * them (upsertCustomersBySourceId), remembered for a few seconds so that its next customers go there first. Should a
 * batch fail, each upsert is tried in a transaction of its own. One per pool.
 */
export function customerUpserter(db: Pool): (upsert: CustomerUpsert) => Promise<UpsertedCustomer | undefined> {
  const withAutoSegments = new AutoSegmentsMemory();
  const inTransaction = (upserts: readonly CustomerUpsert[]) => withTransaction(db, (tx) => upsertCustomersBySourceId(tx, upserts));

  async function ofWorkspace(workspaceId: string, upserts: readonly CustomerUpsert[]): Promise<UpsertedCustomer[]> {
    if (withAutoSegments.has(workspaceId)) return inTransaction(upserts);
    const created = await createCustomersWithoutSegments(db, workspaceId, [...firstBySourceId(upserts.map((u) => u.ref)).values()]);
    if (!created) {
      withAutoSegments.remember(workspaceId);
      return inTransaction(upserts);
    }
    // No AUTO segment, and nothing else can have put a customer created just now in a segment: it is in none.
    const found = new Map<string, UpsertedCustomer>(created.map((c) => [c.sourceId!, { customer: c, segments: [] }]));
    // Created meanwhile by another request (or deleted since): read, or created, as any upsert.
    const others = upserts.filter((u) => !found.has(u.ref.sourceId));
    if (others.length > 0) (await inTransaction(others)).forEach((c, i) => found.set(others[i]!.ref.sourceId, c));
    return upserts.map((u) => found.get(u.ref.sourceId)!);
  }

  return turnBatched(
    (upserts) => workspaceByWorkspace(upserts, ofWorkspace),
    async ({ workspaceId, ref }) => {
      const customer = await withTransaction(db, (tx) => upsertCustomer(tx, workspaceId, ref));
      return customer && { customer };
    },
    { inFlight: CHECKOUT_UPSERTS_IN_FLIGHT },
  );
}

/**
 * Customers of one workspace named by sourceId, found or created in one statement (findOrCreateCustomerFacts): a
 * returning customer's facts, or a new one made with its customer.created event, in one round trip where a lookup then
 * a creation took two; each answer at its reference's place. Undefined where this cannot answer, and the caller looks
 * up and upserts as before (customerUpserter): every reference of a workspace with AUTO segments that creates
 * (remembered for a few seconds, so that its references are not sent here meanwhile), a customer another transaction
 * was creating. The pool (or connection) is the caller's: the web thread's, or an engine partition's for its batch.
 */
export function sourceIdFinder(): (db: Sql, workspaceId: string, refs: ReadonlyArray<CustomerUpsert['ref']>) => Promise<Array<CustomerFacts | undefined>> {
  const withAutoSegments = new AutoSegmentsMemory();
  return async (db, workspaceId, refs) => {
    if (withAutoSegments.has(workspaceId)) return refs.map(() => undefined);
    const distinct = [...firstBySourceId(refs).values()];
    const answers = await findOrCreateCustomerFacts(db, workspaceId, distinct);
    if (!answers) {
      withAutoSegments.remember(workspaceId);
      return refs.map(() => undefined);
    }
    const bySourceId = new Map(distinct.map((ref, i) => [ref.sourceId, answers[i]?.facts]));
    return refs.map((ref) => bySourceId.get(ref.sourceId));
  };
}

/**
 * The customers checkouts name by sourceId (sourceIdFinder) for all the references of an event-loop turn, workspace by
 * workspace, one batch out at once (as creations, CHECKOUT_UPSERTS_IN_FLIGHT). One per pool.
 */
export function checkoutCustomerFinder(db: Pool): (upsert: CustomerUpsert) => Promise<CustomerFacts | undefined> {
  const find = sourceIdFinder();
  const ofWorkspace = (workspaceId: string, upserts: readonly CustomerUpsert[]) => find(db, workspaceId, upserts.map((u) => u.ref));
  return turnBatched(
    (upserts) => workspaceByWorkspace(upserts, ofWorkspace),
    async (upsert) => (await ofWorkspace(upsert.workspaceId, [upsert]))[0],
    { inFlight: CHECKOUT_UPSERTS_IN_FLIGHT },
  );
}

/** The existing customer a reference names (by id, else sourceId, else email), without creating one. */
export async function findCustomerReference(db: Sql, workspaceId: string, ref: CustomerReference): Promise<Customer | undefined> {
  if (ref.id !== undefined) return findCustomer(db, workspaceId, ref.id);
  if (ref.sourceId !== undefined) return findCustomerBySourceId(db, workspaceId, ref.sourceId);
  if (ref.email !== undefined) return findCustomerByEmail(db, workspaceId, ref.email);
  return undefined;
}

/**
 * The customer a reference names, inside the caller's transaction: an unknown sourceId is created (customer.created),
 * an unknown id or email is a 404, a reference naming none of id, sourceId or email a 400.
 */
export async function requireCustomer(tx: Sql, workspaceId: string, ref: CustomerReference): Promise<string> {
  if (ref.id === undefined && ref.sourceId === undefined && ref.email === undefined) {
    throw invalidField('body.customer', 'name the customer by id, sourceId or email');
  }
  const customer =
    ref.id === undefined && ref.sourceId !== undefined
      ? await upsertCustomer(tx, workspaceId, ref)
      : await findCustomerReference(tx, workspaceId, ref);
  if (!customer) throw problem('not_found', 'no such customer; name it by id, email, or a sourceId (created when new)');
  return customer.id;
}
