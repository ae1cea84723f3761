// Segment use cases, each in its operation's unit of work: AUTO membership computed from every customer when a segment
// is written, and re-evaluated for one customer when that customer is written; every membership change records
// customer.segment.entered / .left in the transaction that makes it.
import type { UnitOfWork } from '../../contract/handler.js';
import { invalidField, problem } from '../../contract/problems.js';
import type { Sql } from '../../platform/database.js';
import { recordEvents, type NewEvent } from '../events/index.js';
import { type EventType } from '../../contract/event.schemas.js';
import { evaluateConditions, type CustomerFacts } from '../../checkout/condition.rules.js';
import { type ConditionTree } from '../../contract/condition.schemas.js';
import {
  deleteAllMembers,
  deleteMembers,
  deleteSegmentRow,
  findAutoSegments,
  findCustomerFactsPage,
  findCustomersSegmentIds,
  findMembersAmong,
  findMissingCustomers,
  findSegment,
  insertMembers,
  insertSegment,
  lockSegmentMembership,
  setCustomerMemberships,
  updateSegmentRow,
} from './segment.queries.js';
import type { CreateSegmentBody, Segment, UpdateSegmentBody } from './segment.schemas.js';

// Not yet in the events domain's EVENT_TYPES list (owned there); recorded under these names.
const ENTERED: EventType = 'customer.segment.entered';
const LEFT: EventType = 'customer.segment.left';

const BATCH = 1_000;

function membershipEvents(workspaceId: string, pairs: { entered: Array<[string, string]>; left: Array<[string, string]> }): NewEvent[] {
  return [
    ...pairs.entered.map(([customerId, segmentId]) => ({ workspaceId, type: ENTERED, payload: { customerId, segmentId } })),
    ...pairs.left.map(([customerId, segmentId]) => ({ workspaceId, type: LEFT, payload: { customerId, segmentId } })),
  ];
}

const RESOURCE = 'segment';
const notFound = () => problem('not_found', 'no such segment');

/**
 * Computes an AUTO segment's members from all the workspace's customers, 1,000 at a time, in TS with the one
 * evaluator the rules use (a SQL translation would be a second implementation of the same semantics to keep equal).
 */
async function computeMembers(tx: Sql, workspaceId: string, segmentId: string, conditions: ConditionTree): Promise<void> {
  await lockSegmentMembership(tx, workspaceId, 'exclusive');
  let after: string | null = null;
  for (;;) {
    const customers = await findCustomerFactsPage(tx, workspaceId, after, BATCH);
    if (customers.length === 0) return;
    after = customers[customers.length - 1]!.id;
    const ids = customers.map((c) => c.id!);
    const matching = customers.filter((c) => evaluateConditions(conditions, { customer: c }).ok).map((c) => c.id!);
    const current = await findMembersAmong(tx, segmentId, ids);
    const entered = await insertMembers(tx, workspaceId, segmentId, matching.filter((id) => !current.has(id)));
    const matched = new Set(matching);
    const left = await deleteMembers(tx, workspaceId, segmentId, [...current].filter((id) => !matched.has(id)));
    await recordEvents(tx, membershipEvents(workspaceId, { entered: entered.map((c) => [c, segmentId]), left: left.map((c) => [c, segmentId]) }));
    if (customers.length < BATCH) return;
  }
}

/** The number of customers who entered (those already in stay as they are). */
async function addStaticMembers(tx: Sql, workspaceId: string, segmentId: string, customerIds: readonly string[]): Promise<number> {
  const missing = await findMissingCustomers(tx, workspaceId, customerIds);
  if (missing.length) throw invalidField('body.customerIds', `no customer in this workspace with id ${missing.join(', ')}`);
  const entered = await insertMembers(tx, workspaceId, segmentId, [...new Set(customerIds.map((id) => id.toLowerCase()))]);
  await recordEvents(tx, membershipEvents(workspaceId, { entered: entered.map((c) => [c, segmentId]), left: [] }));
  return entered.length;
}

export async function createSegment({ tx, record }: UnitOfWork, workspaceId: string, body: CreateSegmentBody): Promise<Segment> {
  const conditions = body.type === 'AUTO' ? body.conditions! : null;
  const inserted = await insertSegment(tx, workspaceId, { name: body.name, type: body.type, conditions });
  if (conditions) await computeMembers(tx, workspaceId, inserted.id, conditions);
  else if (body.customerIds) await addStaticMembers(tx, workspaceId, inserted.id, body.customerIds);
  const segment = (await findSegment(tx, workspaceId, inserted.id))!;
  record({ resourceType: RESOURCE, resourceId: segment.id, after: segment });
  return segment;
}

export async function changeSegment({ tx, record }: UnitOfWork, workspaceId: string, id: string, patch: UpdateSegmentBody): Promise<Segment> {
  const before = await findSegment(tx, workspaceId, id, { forUpdate: true });
  if (!before) throw notFound();
  if (patch.conditions !== undefined && before.type !== 'AUTO') {
    throw invalidField('body.conditions', 'a STATIC segment has no conditions: add or remove members instead');
  }
  await updateSegmentRow(tx, workspaceId, id, patch);
  if (patch.conditions !== undefined) await computeMembers(tx, workspaceId, id, patch.conditions);
  const segment = (await findSegment(tx, workspaceId, id))!;
  record({ resourceType: RESOURCE, resourceId: id, before, after: segment });
  return segment;
}

/** Deletes the segment; each member leaves it (with its event). */
export async function removeSegment({ tx, record }: UnitOfWork, workspaceId: string, id: string): Promise<void> {
  const before = await findSegment(tx, workspaceId, id, { forUpdate: true });
  if (!before) throw notFound();
  const left = await deleteAllMembers(tx, workspaceId, id);
  await recordEvents(tx, membershipEvents(workspaceId, { entered: [], left: left.map((c) => [c, id]) }));
  await deleteSegmentRow(tx, workspaceId, id);
  record({ resourceType: RESOURCE, resourceId: id, before });
}

async function staticSegment(tx: Sql, workspaceId: string, id: string): Promise<void> {
  const segment = await findSegment(tx, workspaceId, id, { forUpdate: true });
  if (!segment) throw notFound();
  if (segment.type !== 'STATIC') throw problem('conflict', 'the members of an AUTO segment follow its conditions: change them instead');
}

/** Its entry names the segment and how many customers entered; each one's event names the customer. */
export async function addSegmentMembers({ tx, record }: UnitOfWork, workspaceId: string, id: string, customerIds: readonly string[]): Promise<Segment> {
  await staticSegment(tx, workspaceId, id);
  const added = await addStaticMembers(tx, workspaceId, id, customerIds);
  record({ resourceType: RESOURCE, resourceId: id, after: { added } });
  return (await findSegment(tx, workspaceId, id))!;
}

export async function removeSegmentMembers({ tx, record }: UnitOfWork, workspaceId: string, id: string, customerIds: readonly string[]): Promise<Segment> {
  await staticSegment(tx, workspaceId, id);
  const left = await deleteMembers(tx, workspaceId, id, [...new Set(customerIds.map((c) => c.toLowerCase()))]);
  await recordEvents(tx, membershipEvents(workspaceId, { entered: [], left: left.map((c) => [c, id]) }));
  record({ resourceType: RESOURCE, resourceId: id, after: { removed: left.length } });
  return (await findSegment(tx, workspaceId, id))!;
}

/**
 * Re-evaluates the workspace's AUTO segments for one customer just created or changed, inside the caller's
 * transaction (which must be the one that wrote the customer). STATIC memberships are left alone.
 */
export async function refreshCustomerSegments(tx: Sql, workspaceId: string, customer: CustomerFacts & { id: string }): Promise<void> {
  await refreshCustomersSegments(tx, workspaceId, [customer]);
}

/**
 * refreshCustomerSegments for several customers of the workspace: the lock taken, the AUTO segments and the customers'
 * memberships read once. Answers the AUTO segments each customer is in afterwards (by customer id; the transaction
 * holds the membership lock until it ends, so they stay so until then): for a customer this transaction created, every
 * segment it is in (nothing else can have added one yet), which a checkout uses instead of reading it again.
 */
export async function refreshCustomersSegments(tx: Sql, workspaceId: string, customers: readonly (CustomerFacts & { id: string })[]): Promise<Map<string, string[]>> {
  const autoSegmentsOf = new Map<string, string[]>();
  if (customers.length === 0) return autoSegmentsOf;
  await lockSegmentMembership(tx, workspaceId, 'shared');
  const segments = await findAutoSegments(tx, workspaceId);
  for (const customer of customers) autoSegmentsOf.set(customer.id, []);
  if (segments.length === 0) return autoSegmentsOf;
  const memberships = await findCustomersSegmentIds(tx, workspaceId, customers.map((c) => c.id));
  for (const customer of customers) {
    const current = new Set(memberships.get(customer.id));
    const holds = new Set(segments.filter((s) => evaluateConditions(s.conditions, { customer: { ...customer, segments: [] } }).ok).map((s) => s.id));
    autoSegmentsOf.set(customer.id, [...holds]);
    const enter = [...holds].filter((id) => !current.has(id));
    const leave = segments.map((s) => s.id).filter((id) => current.has(id) && !holds.has(id));
    if (enter.length === 0 && leave.length === 0) continue;
    const { entered, left } = await setCustomerMemberships(tx, workspaceId, customer.id, { enter, leave });
    await recordEvents(tx, membershipEvents(workspaceId, { entered: entered.map((s) => [customer.id, s]), left: left.map((s) => [customer.id, s]) }));
  }
  return autoSegmentsOf;
}

/** Customer writes that change no AUTO segment membership (a deletion) still wait for a running computation. */
export async function awaitSegmentComputations(tx: Sql, workspaceId: string): Promise<void> {
  await lockSegmentMembership(tx, workspaceId, 'shared');
}
