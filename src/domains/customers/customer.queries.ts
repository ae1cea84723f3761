// SQL of customers: parameterized, explicit columns, one row mapper; every statement is scoped to a workspace.
import type { CursorCodec } from '../../platform/cursor.js';
import { preparedQuery, type Sql } from '../../platform/database.js';
import { presentFields } from '../../platform/partial-update.js';
import { keysetPage } from '../../platform/pagination.js';
import { uuidv7 } from '../../platform/ids.js';
import { outboxInsertOf } from '../events/index.js';
import type { CustomerFacts } from '../../checkout/condition.rules.js';
import { customerFactsBySourceIdSql, isAutoSegmentsFound, noAutoSegmentsCheck, toCustomerFacts, type CustomerFactsRow } from '../segments/index.js';
import type { CreateCustomerBody, Customer, ListCustomersQuery, UpdateCustomerBody } from './customer.schemas.js';

const COLUMNS = 'id, source_id, email, name, metadata, created_at, updated_at';

interface CustomerRow {
  [column: string]: unknown;
  id: string;
  source_id: string | null;
  email: string | null;
  name: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

function toCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    sourceId: row.source_id,
    email: row.email,
    name: row.name,
    metadata: row.metadata,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

// A new customer's id is time-ordered (uuidv7): a flash sale's new customers land at the right edge of the b-trees of
// customers and of redemptions by customer, not on random pages of them (bench, 2026-11-29: a new customer's insert
// took 68 µs of PostgreSQL with random ids, 38 with these).
function insertValues(workspaceId: string, fields: CreateCustomerBody): unknown[] {
  return [workspaceId, uuidv7(), fields.sourceId ?? null, fields.email ?? null, fields.name ?? null, fields.metadata ?? {}];
}

/** Throws UNIQUE_VIOLATION (customers_source_id_unique) when the sourceId exists in the workspace. */
export async function insertCustomer(db: Sql, workspaceId: string, fields: CreateCustomerBody): Promise<Customer> {
  const { rows } = await db.query<CustomerRow>(
    `INSERT INTO customers (workspace_id, id, source_id, email, name, metadata) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    insertValues(workspaceId, fields),
  );
  return toCustomer(rows[0]!);
}

/** Inserts unless the sourceId exists (or is being inserted by a concurrent transaction): undefined then. */
export async function insertCustomerIfAbsent(
  db: Sql,
  workspaceId: string,
  fields: CreateCustomerBody & { sourceId: string },
): Promise<Customer | undefined> {
  const { rows } = await db.query<CustomerRow>(
    `INSERT INTO customers (workspace_id, id, source_id, email, name, metadata) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (workspace_id, source_id) DO NOTHING RETURNING ${COLUMNS}`,
    insertValues(workspaceId, fields),
  );
  return rows[0] && toCustomer(rows[0]);
}

/**
 * insertCustomerIfAbsent for many sourceIds (distinct) in one statement: those inserted. Rows go in sourceId order, so
 * that two such statements sharing sourceIds wait on each other in the same order, never in a cycle.
 */
export async function insertCustomersIfAbsent(db: Sql, workspaceId: string, fields: readonly (CreateCustomerBody & { sourceId: string })[]): Promise<Customer[]> {
  const { rows } = await db.query<CustomerRow>(INSERT_IF_ABSENT, [workspaceId, ...newCustomerColumns(fields)]);
  return rows.map(toCustomer);
}

// Parameters $2..$6 of INSERT_IF_ABSENT: the new customers' columns, their ids time-ordered.
function newCustomerColumns(fields: readonly (CreateCustomerBody & { sourceId: string })[]): unknown[] {
  return [
    fields.map(() => uuidv7()),
    fields.map((f) => f.sourceId),
    fields.map((f) => f.email ?? null),
    fields.map((f) => f.name ?? null),
    fields.map((f) => JSON.stringify(f.metadata ?? {})),
  ];
}

const INSERT_IF_ABSENT = `INSERT INTO customers (workspace_id, id, source_id, email, name, metadata)
  SELECT $1, f.id, f.source_id, f.email, f.name, f.metadata
  FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::jsonb[]) AS f(id, source_id, email, name, metadata)
  ORDER BY f.source_id
  ON CONFLICT (workspace_id, source_id) DO NOTHING RETURNING ${COLUMNS}`;

// One statement: the customers inserted, the customer.created event of each one inserted (the payload
// customerCreatedPayload gives), and the segments' check (materialized: run once a statement), which the answer's rows
// need to pass.
const CREATE_WITHOUT_SEGMENTS = `WITH created AS (
  ${INSERT_IF_ABSENT}
), announced AS (
  ${outboxInsertOf(`SELECT e.event_id, $1, 'customer.created', jsonb_strip_nulls(jsonb_build_object('customerId', c.id, 'sourceId', c.source_id, 'email', c.email))
  FROM created c JOIN unnest($2::uuid[], $7::uuid[]) AS e(customer_id, event_id) ON e.customer_id = c.id
  ORDER BY e.event_id`)}
), checked AS MATERIALIZED (SELECT ${noAutoSegmentsCheck('$1')} AS ok)
SELECT c.* FROM created c, checked WHERE checked.ok`;

/**
 * insertCustomersIfAbsent with the customer.created event of each one created, in one statement of its own (its own
 * transaction): one round trip where a transaction takes six. Only for a workspace without AUTO segments, which the
 * statement checks after any segment computation running meanwhile: those created, or undefined when the workspace has
 * an AUTO segment (nothing written then).
 */
export async function createCustomersWithoutSegments(
  db: Sql,
  workspaceId: string,
  fields: readonly (CreateCustomerBody & { sourceId: string })[],
): Promise<Customer[] | undefined> {
  try {
    const { rows } = await preparedQuery<CustomerRow>(db, 'customers.create-without-segments', CREATE_WITHOUT_SEGMENTS, [
      workspaceId,
      ...newCustomerColumns(fields),
      fields.map(() => uuidv7()),
    ]);
    return rows.map(toCustomer);
  } catch (error) {
    if (isAutoSegmentsFound(error)) return undefined;
    throw error;
  }
}

// One statement for the customers checkouts name by sourceId: those found are read with their segments (as a facts
// lookup reads them), the others inserted with their customer.created events; the AUTO-segments check runs only when
// it creates any (a returning customer needs none).
const FIND_OR_CREATE = `WITH k AS (
  SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::uuid[]) WITH ORDINALITY AS k(id, source_id, email, name, metadata, event_id, i)
), found AS (
  SELECT k.i, f.* FROM k CROSS JOIN LATERAL (${customerFactsBySourceIdSql('$1', 'k.source_id')}) f
), created AS (
  INSERT INTO customers (workspace_id, id, source_id, email, name, metadata)
  SELECT $1, k.id, k.source_id, k.email, k.name, k.metadata FROM k WHERE NOT EXISTS (SELECT 1 FROM found WHERE found.i = k.i)
  ORDER BY k.source_id
  ON CONFLICT (workspace_id, source_id) DO NOTHING RETURNING id, source_id, email, name, metadata, created_at
), announced AS (
  ${outboxInsertOf(`SELECT k.event_id, $1, 'customer.created', jsonb_strip_nulls(jsonb_build_object('customerId', c.id, 'sourceId', c.source_id, 'email', c.email))
  FROM created c JOIN k ON k.id = c.id
  ORDER BY k.event_id`)}
), checked AS MATERIALIZED (SELECT CASE WHEN EXISTS (SELECT 1 FROM created) THEN ${noAutoSegmentsCheck('$1')} ELSE true END AS ok)
SELECT f.i, f.id, f.source_id, f.email, f.name, f.metadata, f.created_at, f.segments, false AS created FROM found f
UNION ALL
SELECT k.i, c.id, c.source_id, c.email, c.name, c.metadata, c.created_at, '{}'::uuid[], true FROM created c JOIN k ON k.id = c.id, checked WHERE checked.ok`;

/** A customer a checkout names by sourceId, as findOrCreateCustomerFacts answers: its facts, and whether it is new. */
export interface FoundOrCreated {
  facts: CustomerFacts;
  created: boolean;
}

/**
 * For customers named by sourceId (distinct), in one statement of its own: the facts of each (fields, metadata, every
 * segment it is in), found, or created with its customer.created event when absent (in no segment). Only for a
 * workspace without AUTO segments when any is created: undefined then, nothing written. A sourceId that another
 * transaction was creating meanwhile is neither found nor created: undefined at its place.
 */
export async function findOrCreateCustomerFacts(
  db: Sql,
  workspaceId: string,
  fields: readonly (CreateCustomerBody & { sourceId: string })[],
): Promise<Array<FoundOrCreated | undefined> | undefined> {
  try {
    const { rows } = await preparedQuery<CustomerFactsRow & { i: string; created: boolean }>(db, 'customers.find-or-create', FIND_OR_CREATE, [
      workspaceId,
      ...newCustomerColumns(fields),
      fields.map(() => uuidv7()),
    ]);
    const answers: Array<FoundOrCreated | undefined> = new Array(fields.length).fill(undefined);
    for (const row of rows) answers[Number(row.i) - 1] = { facts: toCustomerFacts(row), created: row.created };
    return answers;
  } catch (error) {
    if (isAutoSegmentsFound(error)) return undefined;
    throw error;
  }
}

export async function findCustomersBySourceIds(db: Sql, workspaceId: string, sourceIds: readonly string[]): Promise<Customer[]> {
  const { rows } = await db.query<CustomerRow>(`SELECT ${COLUMNS} FROM customers WHERE workspace_id = $1 AND source_id = ANY($2::text[])`, [
    workspaceId,
    sourceIds,
  ]);
  return rows.map(toCustomer);
}

export async function findCustomer(db: Sql, workspaceId: string, id: string): Promise<Customer | undefined> {
  const { rows } = await db.query<CustomerRow>(`SELECT ${COLUMNS} FROM customers WHERE workspace_id = $1 AND id = $2`, [
    workspaceId,
    id,
  ]);
  return rows[0] && toCustomer(rows[0]);
}

/** The customer, its row locked until the transaction ends: what an update starts from. */
export async function lockCustomer(tx: Sql, workspaceId: string, id: string): Promise<Customer | undefined> {
  const { rows } = await tx.query<CustomerRow>(`SELECT ${COLUMNS} FROM customers WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE`, [
    workspaceId,
    id,
  ]);
  return rows[0] && toCustomer(rows[0]);
}

export async function findCustomerBySourceId(db: Sql, workspaceId: string, sourceId: string): Promise<Customer | undefined> {
  const { rows } = await db.query<CustomerRow>(`SELECT ${COLUMNS} FROM customers WHERE workspace_id = $1 AND source_id = $2`, [
    workspaceId,
    sourceId,
  ]);
  return rows[0] && toCustomer(rows[0]);
}

/** Sets the fields present in the patch ($3 names them): `null` clears, a field left out is kept. */
export async function updateCustomer(
  db: Sql,
  workspaceId: string,
  id: string,
  patch: UpdateCustomerBody,
): Promise<Customer | undefined> {
  const { rows } = await db.query<CustomerRow>(
    `UPDATE customers SET
       source_id = CASE WHEN 'sourceId' = ANY($3) THEN $4::text ELSE source_id END,
       email = CASE WHEN 'email' = ANY($3) THEN $5::text ELSE email END,
       name = CASE WHEN 'name' = ANY($3) THEN $6::text ELSE name END,
       metadata = CASE WHEN 'metadata' = ANY($3) THEN $7::jsonb ELSE metadata END,
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [
      workspaceId,
      id,
      presentFields(patch),
      patch.sourceId ?? null,
      patch.email ?? null,
      patch.name ?? null,
      patch.metadata ?? null,
    ],
  );
  return rows[0] && toCustomer(rows[0]);
}

/** The customer as it was, or undefined when there is none. */
export async function deleteCustomer(db: Sql, workspaceId: string, id: string): Promise<Customer | undefined> {
  const { rows } = await db.query<CustomerRow>(`DELETE FROM customers WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [
    workspaceId,
    id,
  ]);
  return rows[0] && toCustomer(rows[0]);
}

export function listCustomers(db: Sql, cursors: CursorCodec, workspaceId: string, request: ListCustomersQuery) {
  const where = ['workspace_id = $1'];
  const params: unknown[] = [workspaceId];
  if (request.sourceId !== undefined) {
    params.push(request.sourceId);
    where.push(`source_id = $${params.length}`);
  }
  if (request.email !== undefined) {
    params.push(request.email);
    where.push(`lower(email) = lower($${params.length})`);
  }
  return keysetPage<CustomerRow, Customer>(
    db,
    cursors,
    { list: 'customers.list', from: 'customers', columns: COLUMNS, where, params, map: toCustomer },
    request,
  );
}

export async function findCustomerByEmail(db: Sql, workspaceId: string, email: string): Promise<Customer | undefined> {
  const { rows } = await db.query<CustomerRow>(
    `SELECT ${COLUMNS} FROM customers WHERE workspace_id = $1 AND lower(email) = lower($2) ORDER BY created_at LIMIT 1`,
    [workspaceId, email],
  );
  return rows[0] && toCustomer(rows[0]);
}
