// SQL of segments and their members: parameterized, explicit columns, one row mapper per row type; every statement is
// scoped to a workspace. Customers are read here (facts for AUTO segments) but never written.
import type { CursorCodec } from '../../platform/cursor.js';
import { preparedQuery, type Sql } from '../../platform/database.js';
import { keysetPage } from '../../platform/pagination.js';
import type { ConditionTree } from '../../contract/condition.schemas.js';
import type { CustomerFacts } from '../../checkout/condition.rules.js';
import type { ListSegmentsQuery, Segment, SegmentMember, SegmentType } from './segment.schemas.js';

const COLUMNS = 'id, name, type, conditions, created_at, updated_at';

interface SegmentRow {
  [column: string]: unknown;
  id: string;
  name: string;
  type: SegmentType;
  conditions: ConditionTree | null;
  created_at: Date;
  updated_at: Date;
  size?: number;
}

function toSegment(row: SegmentRow): Segment {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    conditions: row.conditions,
    ...(row.size !== undefined ? { size: row.size } : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

// int8, read as a number: an int4 cast would fail the read past 2^31 members.
const SIZE = '(SELECT count(*) FROM segment_members m WHERE m.segment_id = segments.id) AS size';

/**
 * AUTO membership is computed from every customer by one transaction while customer writes evaluate the AUTO segments
 * they see: a segment computation holds this lock exclusively, customer writes share it, so neither misses the other.
 */
export async function lockSegmentMembership(tx: Sql, workspaceId: string, mode: 'exclusive' | 'shared'): Promise<void> {
  const fn = mode === 'exclusive' ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared';
  await tx.query(`SELECT ${fn}(hashtextextended('segment-membership:' || $1::text, 0))`, [workspaceId]);
}

/**
 * For a statement that creates customers without evaluating AUTO segments: an SQL expression, true once it holds the
 * segment-membership lock shared and has seen (after any computation that held it) that workspace `workspace` (an SQL
 * expression) has no AUTO segment; should it have one, it raises (isAutoSegmentsFound) and the statement is undone.
 * The function is in schema 0072.
 */
export function noAutoSegmentsCheck(workspace: string): string {
  return `segment_membership_without_auto(${workspace})`;
}

/** The raise of noAutoSegmentsCheck. */
export function isAutoSegmentsFound(error: unknown): boolean {
  return (error as { code?: string }).code === 'P0001' && (error as Error).message === 'segment membership: AUTO segments';
}

export async function insertSegment(
  tx: Sql,
  workspaceId: string,
  fields: { name: string; type: SegmentType; conditions: ConditionTree | null },
): Promise<Segment> {
  const { rows } = await tx.query<SegmentRow>(
    `INSERT INTO segments (workspace_id, name, type, conditions) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
    [workspaceId, fields.name, fields.type, fields.conditions === null ? null : JSON.stringify(fields.conditions)],
  );
  return toSegment(rows[0]!);
}

export async function findSegment(db: Sql, workspaceId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<Segment | undefined> {
  const { rows } = await db.query<SegmentRow>(
    `SELECT ${COLUMNS}, ${SIZE} FROM segments WHERE workspace_id = $1 AND id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [workspaceId, id],
  );
  return rows[0] && toSegment(rows[0]);
}

export function listSegments(db: Sql, cursors: CursorCodec, workspaceId: string, request: ListSegmentsQuery) {
  return keysetPage<SegmentRow, Segment>(
    db,
    cursors,
    { list: 'segments.list', from: 'segments', columns: COLUMNS, where: ['workspace_id = $1'], params: [workspaceId], map: toSegment },
    request,
  );
}

/** Sets name and conditions when given (undefined keeps them). */
export async function updateSegmentRow(
  tx: Sql,
  workspaceId: string,
  id: string,
  patch: { name?: string | undefined; conditions?: ConditionTree | undefined },
): Promise<void> {
  await tx.query(
    `UPDATE segments SET name = COALESCE($3, name), conditions = COALESCE($4::jsonb, conditions), updated_at = now()
     WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, id, patch.name ?? null, patch.conditions === undefined ? null : JSON.stringify(patch.conditions)],
  );
}

export async function deleteSegmentRow(tx: Sql, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM segments WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return (rowCount ?? 0) > 0;
}

export async function findAutoSegments(tx: Sql, workspaceId: string): Promise<Array<{ id: string; conditions: ConditionTree }>> {
  const { rows } = await tx.query<{ id: string; conditions: ConditionTree }>(
    `SELECT id, conditions FROM segments WHERE workspace_id = $1 AND type = 'AUTO'`,
    [workspaceId],
  );
  return rows;
}

/** Adds members (those already in stay as they are); the ids that were added. */
export async function insertMembers(tx: Sql, workspaceId: string, segmentId: string, customerIds: readonly string[]): Promise<string[]> {
  if (customerIds.length === 0) return [];
  const { rows } = await tx.query<{ customer_id: string }>(
    `INSERT INTO segment_members (workspace_id, segment_id, customer_id)
     SELECT $1, $2, c FROM unnest($3::uuid[]) AS c ON CONFLICT DO NOTHING RETURNING customer_id`,
    [workspaceId, segmentId, customerIds],
  );
  return rows.map((r) => r.customer_id);
}

/** Removes members; the ids that were members. */
export async function deleteMembers(tx: Sql, workspaceId: string, segmentId: string, customerIds: readonly string[]): Promise<string[]> {
  if (customerIds.length === 0) return [];
  const { rows } = await tx.query<{ customer_id: string }>(
    `DELETE FROM segment_members WHERE workspace_id = $1 AND segment_id = $2 AND customer_id = ANY($3::uuid[]) RETURNING customer_id`,
    [workspaceId, segmentId, customerIds],
  );
  return rows.map((r) => r.customer_id);
}

export async function deleteAllMembers(tx: Sql, workspaceId: string, segmentId: string): Promise<string[]> {
  const { rows } = await tx.query<{ customer_id: string }>(
    'DELETE FROM segment_members WHERE workspace_id = $1 AND segment_id = $2 RETURNING customer_id',
    [workspaceId, segmentId],
  );
  return rows.map((r) => r.customer_id);
}

/** Adds and removes one customer's memberships of the given segments. */
export async function setCustomerMemberships(
  tx: Sql,
  workspaceId: string,
  customerId: string,
  change: { enter: readonly string[]; leave: readonly string[] },
): Promise<{ entered: string[]; left: string[] }> {
  const entered = change.enter.length
    ? (
        await tx.query<{ segment_id: string }>(
          `INSERT INTO segment_members (workspace_id, segment_id, customer_id)
           SELECT $1, s, $2 FROM unnest($3::uuid[]) AS s ON CONFLICT DO NOTHING RETURNING segment_id`,
          [workspaceId, customerId, change.enter],
        )
      ).rows.map((r) => r.segment_id)
    : [];
  const left = change.leave.length
    ? (
        await tx.query<{ segment_id: string }>(
          `DELETE FROM segment_members WHERE workspace_id = $1 AND customer_id = $2 AND segment_id = ANY($3::uuid[]) RETURNING segment_id`,
          [workspaceId, customerId, change.leave],
        )
      ).rows.map((r) => r.segment_id)
    : [];
  return { entered, left };
}

/** The segment ids of each of these customers, in one read (none: an empty list). */
export async function findCustomersSegmentIds(tx: Sql, workspaceId: string, customerIds: readonly string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>(customerIds.map((id) => [id, []]));
  const { rows } = await tx.query<{ customer_id: string; segment_id: string }>(
    'SELECT customer_id, segment_id FROM segment_members WHERE workspace_id = $1 AND customer_id = ANY($2::uuid[])',
    [workspaceId, customerIds],
  );
  for (const row of rows) found.get(row.customer_id)?.push(row.segment_id);
  return found;
}

/** The ids among these that name no customer of the workspace. */
export async function findMissingCustomers(db: Sql, workspaceId: string, customerIds: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT given.id::text AS id FROM unnest($2::uuid[]) AS given(id)
     WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.workspace_id = $1 AND c.id = given.id)`,
    [workspaceId, [...new Set(customerIds.map((id) => id.toLowerCase()))]],
  );
  return rows.map((r) => r.id);
}

export interface CustomerFactsRow {
  [column: string]: unknown;
  id: string;
  source_id: string | null;
  email: string | null;
  name: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  segments?: string[];
}

export function toCustomerFacts(row: CustomerFactsRow): CustomerFacts {
  return {
    id: row.id,
    sourceId: row.source_id,
    email: row.email,
    name: row.name,
    createdAt: row.created_at.toISOString(),
    segments: row.segments ?? [],
    metadata: row.metadata,
  };
}

const FACT_COLUMNS = 'c.id, c.source_id, c.email, c.name, c.metadata, c.created_at';

/**
 * How a lookup finds its customer `c`, the value compared being `value` (a parameter or a column), or undefined for an
 * empty one.
 */
function lookupWhere(ref: CustomerLookup, value: string): [where: string, value: string, by: 'id' | 'source' | 'email'] | undefined {
  if (ref.id !== undefined) return [`c.id = ${value}::uuid`, ref.id, 'id'];
  if (ref.sourceId !== undefined) return [`c.source_id = ${value}`, ref.sourceId, 'source'];
  if (ref.email !== undefined) return [`lower(c.email) = lower(${value})`, ref.email, 'email'];
  return undefined;
}

const FACTS_FROM = `SELECT ${FACT_COLUMNS},
       ARRAY(SELECT m.segment_id FROM segment_members m WHERE m.customer_id = c.id ORDER BY m.segment_id) AS segments
     FROM customers c`;

/**
 * The customer a lookup finds (by id, else sourceId, else email, case-insensitive; the oldest), with the ids of every
 * segment it is in, as a statement of at most one row ($1 the workspace, $2 the value): read alone by
 * findCustomerFacts, or joined LATERAL into a statement that reads more beside it. Map its row with toCustomerFacts.
 */
export function customerFactsSelect(ref: CustomerLookup): { sql: string; value: string; by: string } | undefined {
  const found = lookupWhere(ref, '$2');
  if (!found) return undefined;
  const sql = `${FACTS_FROM} WHERE c.workspace_id = $1 AND ${found[0]} ORDER BY c.created_at LIMIT 1`;
  return { sql, value: found[1], by: found[2] };
}

/**
 * customerFactsSelect by sourceId with SQL expressions for the workspace and the sourceId (a LATERAL subquery of a
 * statement that reads many, e.g. the checkout's find-or-create of customers).
 */
export function customerFactsBySourceIdSql(workspace: string, sourceId: string): string {
  return `${FACTS_FROM} WHERE c.workspace_id = ${workspace} AND c.source_id = ${sourceId} ORDER BY c.created_at LIMIT 1`;
}

// A named prepared statement per kind of lookup: every checkout with a customer reads it, so it is planned once per
// connection rather than at every call.
export async function findCustomerFacts(db: Sql, workspaceId: string, ref: CustomerLookup): Promise<CustomerFacts | undefined> {
  const select = customerFactsSelect(ref);
  if (!select) return undefined;
  const { rows } = await preparedQuery<CustomerFactsRow>(db, `customer-facts-by-${select.by}`, select.sql, [workspaceId, select.value]);
  return rows[0] && toCustomerFacts(rows[0]);
}

/** One lookup of many: the workspace it reads in and how it names its customer. */
export interface CustomerFactsLookup {
  workspaceId: string;
  ref: CustomerLookup;
}

/**
 * What each of these lookups finds, in their order (undefined where none or empty), as findCustomerFacts would: lookups
 * of one kind (id, sourceId, email) share one prepared statement over arrays of workspaces and values, a lone one its
 * own. Prepared is safe here: each lookup is a LATERAL subquery with LIMIT 1, an index read per value whatever plan
 * is kept (test/customers/customers-at-checkout.test.ts grows the tables under a connection that planned them empty).
 */
export async function findCustomerFactsMany(db: Sql, lookups: readonly CustomerFactsLookup[]): Promise<(CustomerFacts | undefined)[]> {
  const found: (CustomerFacts | undefined)[] = new Array(lookups.length).fill(undefined);
  const byKind = new Map<string, { where: string; at: number[]; workspaces: string[]; values: string[] }>();
  lookups.forEach(({ workspaceId, ref }, at) => {
    const lookup = lookupWhere(ref, 'k.value');
    if (!lookup) return;
    const [where, value, by] = lookup;
    let kind = byKind.get(by);
    if (!kind) byKind.set(by, (kind = { where, at: [], workspaces: [], values: [] }));
    kind.at.push(at);
    kind.workspaces.push(workspaceId);
    kind.values.push(value);
  });
  await Promise.all(
    [...byKind].map(async ([by, kind]) => {
      if (kind.at.length === 1) {
        const at = kind.at[0]!;
        found[at] = await findCustomerFacts(db, lookups[at]!.workspaceId, lookups[at]!.ref);
        return;
      }
      const { rows } = await preparedQuery<CustomerFactsRow & { i: string }>(
        db,
        `customer-facts-many-by-${by}`,
        `SELECT k.i, f.* FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS k(workspace_id, value, i)
         CROSS JOIN LATERAL (${FACTS_FROM} WHERE c.workspace_id = k.workspace_id AND ${kind.where} ORDER BY c.created_at LIMIT 1) f`,
        [kind.workspaces, kind.values],
      );
      for (const row of rows) found[kind.at[Number(row.i) - 1]!] = toCustomerFacts(row);
    }),
  );
  return found;
}

export interface CustomerLookup {
  id?: string | undefined;
  sourceId?: string | undefined;
  email?: string | undefined;
}

/** A page of the workspace's customers in id order, after `afterId`, as facts without segments. */
export async function findCustomerFactsPage(db: Sql, workspaceId: string, afterId: string | null, limit: number): Promise<CustomerFacts[]> {
  const { rows } = await db.query<CustomerFactsRow>(
    `SELECT ${FACT_COLUMNS} FROM customers c
     WHERE c.workspace_id = $1 AND ($2::uuid IS NULL OR c.id > $2::uuid) ORDER BY c.id LIMIT $3`,
    [workspaceId, afterId, limit],
  );
  return rows.map(toCustomerFacts);
}

/** Of these customers, the ones in the segment. */
export async function findMembersAmong(db: Sql, segmentId: string, customerIds: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ customer_id: string }>(
    'SELECT customer_id FROM segment_members WHERE segment_id = $1 AND customer_id = ANY($2::uuid[])',
    [segmentId, customerIds],
  );
  return new Set(rows.map((r) => r.customer_id));
}

interface MemberRow {
  [column: string]: unknown;
  id: string;
  source_id: string | null;
  email: string | null;
  name: string | null;
  created_at: Date;
}

function toMember(row: MemberRow): SegmentMember {
  return { customerId: row.id, sourceId: row.source_id, email: row.email, name: row.name, addedAt: row.created_at.toISOString() };
}

export function listMembers(db: Sql, cursors: CursorCodec, workspaceId: string, segmentId: string, request: ListSegmentsQuery) {
  return keysetPage<MemberRow, SegmentMember>(
    db,
    cursors,
    {
      list: `segments.listMembers:${segmentId}`,
      // The member's customer id is the keyset id: (created_at, id) of segment_members is unique within a segment.
      from: `(SELECT m.workspace_id, m.segment_id, m.customer_id AS id, m.created_at, c.source_id, c.email, c.name
              FROM segment_members m JOIN customers c ON c.id = m.customer_id) AS members`,
      columns: 'id, source_id, email, name, created_at',
      where: ['workspace_id = $1', 'segment_id = $2'],
      params: [workspaceId, segmentId],
      map: toMember,
    },
    request,
  );
}
