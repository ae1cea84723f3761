// Reads the catalog of a migrated database and lists what breaks the Citus rules for the plan in
// distribution-plan.ts: distribution column, unique keys, foreign keys between distributed, reference and local tables.
import type { Sql } from '../../src/platform/database.js';
import { DISTRIBUTION_COLUMN, placementOf, type Placement, type Rule } from './distribution-plan.js';

export interface Violation {
  /** `rule:table.constraint`, the key of KNOWN_EXCEPTIONS. */
  id: string;
  rule: Rule;
  table: string;
  constraint: string;
  detail: string;
}

export async function listTables(db: Sql): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

async function distributionColumns(db: Sql): Promise<Map<string, { nullable: boolean }>> {
  const { rows } = await db.query<{ table_name: string; is_nullable: 'YES' | 'NO' }>(
    `SELECT table_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public' AND column_name = $1`,
    [DISTRIBUTION_COLUMN],
  );
  return new Map(rows.map((r) => [r.table_name, { nullable: r.is_nullable === 'YES' }]));
}

/** Primary keys, unique constraints and unique indexes (partial and expression ones included), by the name that shows. */
async function uniqueKeys(db: Sql) {
  const { rows } = await db.query<{ table_name: string; name: string; columns: string[]; has_column: boolean }>(
    `SELECT t.relname AS table_name, coalesce(con.conname, i.relname) AS name,
            ARRAY(SELECT coalesce(a.attname::text, '(expression)') FROM unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n)
                    LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n) AS columns,
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = $1 AND a.attnum = ANY (ix.indkey)) AS has_column
       FROM pg_index ix
       JOIN pg_class i ON i.oid = ix.indexrelid
       JOIN pg_class t ON t.oid = ix.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
       LEFT JOIN pg_constraint con ON con.conindid = ix.indexrelid AND con.contype IN ('p', 'u')
      WHERE n.nspname = 'public' AND ix.indisunique
      ORDER BY 1, 2`,
    [DISTRIBUTION_COLUMN],
  );
  return rows;
}

/** Foreign keys, with whether the distribution column of the child is paired with that of the parent. */
export async function foreignKeys(db: Sql) {
  const { rows } = await db.query<{ child: string; parent: string; name: string; child_columns: string[]; parent_columns: string[]; paired: boolean }>(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent, c.conname AS name,
            ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
                    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n) AS child_columns,
            ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n)
                    JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.n) AS parent_columns,
            EXISTS (SELECT 1 FROM unnest(c.conkey, c.confkey) AS p(child_attnum, parent_attnum)
                      JOIN pg_attribute ca ON ca.attrelid = c.conrelid AND ca.attnum = p.child_attnum
                      JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = p.parent_attnum
                     WHERE ca.attname = $1 AND pa.attname = $1) AS paired
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = 'public' AND c.contype = 'f'
      ORDER BY 1, 3`,
    [DISTRIBUTION_COLUMN],
  );
  return rows;
}

function violation(rule: Rule, table: string, constraint: string, detail: string): Violation {
  return { id: `${rule}:${table}.${constraint}`, rule, table, constraint, detail };
}

/** Every break of the rules, for the tables the plan places; unplaced tables are reported by the caller. */
export async function findViolations(db: Sql): Promise<Violation[]> {
  const found: Violation[] = [];
  const columns = await distributionColumns(db);
  for (const table of await listTables(db)) {
    if (placementOf(table) !== 'distributed') continue;
    const column = columns.get(table);
    if (!column) found.push(violation('distribution-column', table, DISTRIBUTION_COLUMN, `no ${DISTRIBUTION_COLUMN} column`));
    else if (column.nullable) found.push(violation('distribution-column', table, DISTRIBUTION_COLUMN, `${DISTRIBUTION_COLUMN} is nullable`));
  }
  for (const key of await uniqueKeys(db)) {
    if (placementOf(key.table_name) === 'distributed' && !key.has_column) {
      found.push(violation('unique-key', key.table_name, key.name, `unique on (${key.columns.join(', ')})`));
    }
  }
  for (const fk of await foreignKeys(db)) {
    const from: Placement | undefined = placementOf(fk.child);
    const to: Placement | undefined = placementOf(fk.parent);
    const shape = `(${fk.child_columns.join(', ')}) → ${fk.parent} (${fk.parent_columns.join(', ')})`;
    if (from === 'distributed' && to === 'distributed' && !fk.paired) {
      found.push(violation('foreign-key', fk.child, fk.name, shape));
    } else if (from !== 'distributed' && to === 'distributed') {
      found.push(violation('reference-to-distributed', fk.child, fk.name, `${from} table: ${shape}`));
    } else if (from === 'distributed' && to === 'local') {
      found.push(violation('distributed-to-local', fk.child, fk.name, shape));
    }
  }
  return found;
}

/** Rows whose workspace differs from that of the row they refer to, per foreign key and implied reference. */
export async function crossWorkspaceReferences(
  db: Sql,
  references: ReadonlyArray<readonly [string, string, string, string]>,
): Promise<Array<{ reference: string; rows: number }>> {
  const out: Array<{ reference: string; rows: number }> = [];
  for (const [child, column, parent, parentColumn] of references) {
    // Identifiers come from the catalog and the plan, never from input.
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${child}" c JOIN "${parent}" p ON p."${parentColumn}" = c."${column}"
        WHERE p.workspace_id <> c.workspace_id`,
    );
    out.push({ reference: `${child}.${column} → ${parent}.${parentColumn}`, rows: rows[0]!.n });
  }
  return out;
}

/** The transaction id from which rows written later are "new" (32-bit xmin space). */
export async function currentXid(db: Sql): Promise<number> {
  const { rows } = await db.query<{ x: string }>(`SELECT (pg_current_xact_id()::text::bigint % 4294967296)::text AS x`);
  return Number(rows[0]!.x);
}

/** Per table, the workspaces of the rows inserted or updated by transactions from `since` on. */
export async function workspacesWrittenSince(db: Sql, tables: readonly string[], since: number): Promise<Map<string, Map<string, number>>> {
  const written = new Map<string, Map<string, number>>();
  for (const table of tables) {
    const { rows } = await db.query<{ w: string; n: number }>(
      `SELECT workspace_id::text AS w, count(*)::int AS n FROM "${table}" WHERE xmin::text::bigint >= $1 GROUP BY 1`,
      [since],
    );
    if (rows.length) written.set(table, new Map(rows.map((r) => [r.w, r.n])));
  }
  return written;
}
