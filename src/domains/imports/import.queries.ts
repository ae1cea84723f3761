// SQL of bulk imports: the imports table (the job resource), an import's staging tables (UNLOGGED, its own, named by a
// server-made random id, so that two sessions can merge its batches at once), the set-based checks, and the merges into
// vouchers and customers in batches. Values are always parameters.
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Sql } from '../../platform/database.js';
import type { VoucherFields } from '../../checkout/voucher-template.rules.js';
import type { Import, ImportFormat, ImportKind, ImportRejection, ImportStatus, RejectionCode } from './import.schemas.js';
import { MAX_REPORTED_REJECTIONS } from './import.schemas.js';

const COLUMNS = `id, kind, status, format, campaign_id, rows_read, rows_inserted, rows_rejected, rejections, error, created_at,
  started_at, finished_at`;

interface ImportRow {
  [column: string]: unknown;
  id: string;
  kind: ImportKind;
  status: ImportStatus;
  format: ImportFormat;
  campaign_id: string | null;
  rows_read: number;
  rows_inserted: number;
  rows_rejected: number;
  rejections: ImportRejection[];
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

function toImport(row: ImportRow): Import {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    format: row.format,
    campaignId: row.campaign_id,
    counts: { read: row.rows_read, inserted: row.rows_inserted, rejected: row.rows_rejected },
    rejections: row.rejections,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    startedAt: row.started_at?.toISOString() ?? null,
    finishedAt: row.finished_at?.toISOString() ?? null,
  };
}

export async function insertImport(
  db: Sql,
  workspaceId: string,
  fields: { kind: ImportKind; format: ImportFormat; campaignId: string | null; rowsRead: number; rowsRejected: number; rejections: ImportRejection[] },
): Promise<Import> {
  const { rows } = await db.query<ImportRow>(
    `INSERT INTO imports (workspace_id, kind, status, format, campaign_id, rows_read, rows_rejected, rejections)
     VALUES ($1, $2, 'PENDING', $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [workspaceId, fields.kind, fields.format, fields.campaignId, fields.rowsRead, fields.rowsRejected, JSON.stringify(fields.rejections)],
  );
  return toImport(rows[0]!);
}

/** A PENDING or RUNNING import whose heartbeat is this old was cut off: its process stopped. */
const STALE_AFTER = '5 minutes';

/** The import, a cut-off one first marked FAILED. */
export async function findImport(db: Sql, workspaceId: string, id: string): Promise<Import | undefined> {
  const { rows } = await db.query<ImportRow>(
    `WITH cut_off AS (
       UPDATE imports SET status = 'FAILED', finished_at = now(),
         error = 'the import stopped when its service process did; rows merged before stay (run it again: they are refused as existing)'
       WHERE workspace_id = $1 AND id = $2 AND status IN ('PENDING', 'RUNNING') AND heartbeat_at < now() - $3::interval
       RETURNING ${COLUMNS}
     )
     SELECT ${COLUMNS} FROM cut_off
     UNION ALL
     SELECT ${COLUMNS} FROM imports WHERE workspace_id = $1 AND id = $2 AND NOT EXISTS (SELECT 1 FROM cut_off)`,
    [workspaceId, id, STALE_AFTER],
  );
  return rows[0] && toImport(rows[0]);
}

export async function markImportRunning(db: Sql, workspaceId: string, id: string): Promise<void> {
  await db.query(`UPDATE imports SET status = 'RUNNING', started_at = now(), heartbeat_at = now() WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
}

/** Rows refused by the set checks (before any merge): added to the count, with the first rejections so far. */
export async function addImportRejections(db: Sql, workspaceId: string, id: string, count: number, firstRejections: ImportRejection[]): Promise<void> {
  await db.query(
    `UPDATE imports SET rows_rejected = rows_rejected + $3, rejections = $4, heartbeat_at = now() WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, id, count, JSON.stringify(firstRejections)],
  );
}

export async function finishImport(
  db: Sql,
  workspaceId: string,
  id: string,
  outcome: { status: 'SUCCEEDED' | 'FAILED'; error?: string | undefined; rejections?: ImportRejection[] | undefined },
): Promise<Import | undefined> {
  const { rows } = await db.query<ImportRow>(
    `UPDATE imports SET status = $3, error = $4, rejections = COALESCE($5::jsonb, rejections), finished_at = now(), heartbeat_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [workspaceId, id, outcome.status, outcome.error ?? null, outcome.rejections ? JSON.stringify(outcome.rejections) : null],
  );
  return rows[0] && toImport(rows[0]);
}

// --- staging: an import's own UNLOGGED tables (rows, rejections, campaign templates), read by its merging sessions --

/** The staging tables of one import; their names hold a server-made random id, never input. */
export interface Staging {
  id: string;
  rows: string;
  rejections: string;
  templates: string;
}

const STAGING_ID = /^[0-9a-f]{32}$/;
const STAGING_LOCK = 7243;

export function stagingTables(id: string): Staging {
  if (!STAGING_ID.test(id)) throw new Error('a staging id is 32 lower-case hex digits');
  return { id, rows: `import_rows_${id}`, rejections: `import_rejections_${id}`, templates: `import_templates_${id}` };
}

/** The session that stages an import holds this lock until it has dropped the tables; it ends with the session. */
export async function lockStaging(client: Sql, s: Staging): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [STAGING_LOCK, s.id]);
}

export async function unlockStaging(client: Sql, s: Staging): Promise<void> {
  await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [STAGING_LOCK, s.id]);
}

/** Staging tables whose session is gone (its process stopped mid-import) are dropped: nobody holds their lock. */
export async function dropOrphanedStaging(client: Sql): Promise<void> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT substring(relname from 13) AS id FROM pg_class WHERE relkind = 'r' AND relname ~ '^import_rows_[0-9a-f]{32}$'`,
  );
  for (const { id } of rows) {
    const s = stagingTables(id);
    const { rows: got } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked', [STAGING_LOCK, s.id]);
    if (!got[0]?.locked) continue;
    try {
      await dropStaging(client, s);
    } finally {
      await unlockStaging(client, s);
    }
  }
}

const STAGING_COLUMNS: Record<ImportKind, string> = {
  vouchers: `line bigint NOT NULL, code text NOT NULL, campaign_id uuid NOT NULL, active boolean, start_date timestamptz,
    expiration_date timestamptz, redemption_limit integer, per_customer_limit integer, max_discount bigint, gift_amount bigint,
    metadata jsonb`,
  customers: 'line bigint NOT NULL, source_id text NOT NULL, email text, name text, metadata jsonb',
};

/** Fresh staging tables, dropped by dropStaging (or, after a crash, by dropOrphanedStaging). */
export async function createStaging(client: Sql, s: Staging, kind: ImportKind): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${s.rows}, ${s.rejections}, ${s.templates}`);
  await client.query(`CREATE UNLOGGED TABLE ${s.rows} (${STAGING_COLUMNS[kind]})`);
  await client.query(`CREATE UNLOGGED TABLE ${s.rejections} (line bigint PRIMARY KEY, code text NOT NULL, reason text NOT NULL)`);
}

export async function dropStaging(client: Sql, s: Staging): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${s.rows}, ${s.rejections}, ${s.templates}`);
}

/** COPY FROM STDIN into the staged rows: write COPY text lines, then end(). */
export function copyIntoStaging(client: pg.PoolClient, s: Staging, columns: readonly string[]) {
  return client.query(copyFrom(`COPY ${s.rows} (line, ${columns.join(', ')}) FROM STDIN`));
}

/** After the COPY: the batch ranges read by line, and planner statistics of the staged rows. */
export async function indexStaging(client: Sql, s: Staging, key: 'code' | 'source_id'): Promise<void> {
  await client.query(`CREATE INDEX ON ${s.rows} (line)`);
  await client.query(`CREATE INDEX ON ${s.rows} (${key === 'code' ? 'code' : 'source_id'})`);
  await client.query(`ANALYZE ${s.rows}`);
}

/** Refuses (once per row: the first reason stands) rows whose code exists, then repeats of a code within the file. */
export async function rejectTakenCodes(client: Sql, s: Staging, workspaceId: string, kind: ImportKind): Promise<void> {
  const [table, key, code, reason] =
    kind === 'vouchers'
      ? ['vouchers', 'code', 'code_exists', 'a voucher with this code exists']
      : ['customers', 'source_id', 'source_id_exists', 'a customer with this sourceId exists'];
  await client.query(
    `INSERT INTO ${s.rejections} (line, code, reason)
     SELECT r.line, $2, $3 FROM ${s.rows} r WHERE EXISTS (SELECT 1 FROM ${table} t WHERE t.workspace_id = $1 AND t.${key} = r.${key})
     ON CONFLICT (line) DO NOTHING`,
    [workspaceId, code, reason],
  );
  await client.query(
    `INSERT INTO ${s.rejections} (line, code, reason)
     SELECT line, 'duplicate_in_file', 'repeats row ' || first_line FROM (
       SELECT line, min(line) OVER (PARTITION BY ${key}) AS first_line FROM ${s.rows}
     ) repeats WHERE line > first_line
     ON CONFLICT (line) DO NOTHING`,
  );
}

/** The distinct campaigns the staged rows name that exist in the workspace (each read through the campaigns domain). */
export async function stagedCampaignIds(client: Sql, s: Staging, workspaceId: string): Promise<string[]> {
  const { rows } = await client.query<{ campaign_id: string }>(
    `SELECT staged.campaign_id FROM (SELECT DISTINCT campaign_id FROM ${s.rows}) staged
     WHERE EXISTS (SELECT 1 FROM campaigns c WHERE c.workspace_id = $1 AND c.id = staged.campaign_id)`,
    [workspaceId],
  );
  return rows.map((r) => r.campaign_id);
}

/** The voucher fields of each importable campaign, as its template makes them. */
export async function stageTemplates(client: Sql, s: Staging, templates: ReadonlyArray<{ campaignId: string; fields: VoucherFields }>): Promise<void> {
  await client.query(
    `CREATE UNLOGGED TABLE ${s.templates} (campaign_id uuid PRIMARY KEY, type text, discount jsonb, currency text,
       active boolean, start_date timestamptz, expiration_date timestamptz, redemption_limit integer, per_customer_limit integer,
       priority integer, exclusive boolean, max_discount bigint, gift_amount bigint, validation_rule_ids uuid[], schedule jsonb,
       metadata jsonb)`,
  );
  for (const { campaignId, fields: f } of templates) {
    await client.query(
      `INSERT INTO ${s.templates} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [
        campaignId, f.type, f.discount === null ? null : JSON.stringify(f.discount), f.currency, f.active, f.startDate, f.expirationDate,
        f.redemptionLimit, f.perCustomerLimit, f.priority, f.exclusive, f.maxDiscount, f.giftAmount, f.validationRuleIds,
        f.schedule === null ? null : JSON.stringify(f.schedule), JSON.stringify(f.metadata),
      ],
    );
  }
}

/** Rows of campaigns that are missing or make no importable voucher, and rows that do not fit their campaign. */
export async function rejectRowsByCampaign(client: Sql, s: Staging, refused: ReadonlyArray<{ campaignId: string; reason: string }>): Promise<void> {
  await client.query(
    `INSERT INTO ${s.rejections} (line, code, reason)
     SELECT r.line, CASE WHEN x.reason IS NULL THEN 'campaign_not_found' ELSE 'campaign_not_importable' END,
            COALESCE(x.reason, 'no campaign ' || r.campaign_id || ' in this workspace')
     FROM ${s.rows} r LEFT JOIN unnest($1::uuid[], $2::text[]) AS x (campaign_id, reason) ON x.campaign_id = r.campaign_id
     WHERE x.campaign_id IS NOT NULL OR NOT EXISTS (SELECT 1 FROM ${s.templates} t WHERE t.campaign_id = r.campaign_id)
     ON CONFLICT (line) DO NOTHING`,
    [refused.map((r) => r.campaignId), refused.map((r) => r.reason)],
  );
  await client.query(
    `INSERT INTO ${s.rejections} (line, code, reason)
     SELECT r.line, 'invalid_row',
            CASE WHEN r.gift_amount IS NOT NULL AND t.type <> 'GIFT_CARD' THEN 'gift.amount: only GIFT_CARD vouchers have gift credits'
                 ELSE 'expirationDate is before startDate' END
     FROM ${s.rows} r JOIN ${s.templates} t ON t.campaign_id = r.campaign_id
     WHERE (r.gift_amount IS NOT NULL AND t.type <> 'GIFT_CARD')
        OR COALESCE(r.start_date, t.start_date) > COALESCE(r.expiration_date, t.expiration_date)
     ON CONFLICT (line) DO NOTHING`,
  );
}

export async function countRejections(client: Sql, s: Staging): Promise<number> {
  const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s.rejections}`);
  return rows[0]!.n;
}

export async function firstRejections(client: Sql, s: Staging): Promise<ImportRejection[]> {
  const { rows } = await client.query<{ line: number; code: RejectionCode; reason: string }>(
    `SELECT line, code, reason FROM ${s.rejections} ORDER BY line LIMIT $1`,
    [MAX_REPORTED_REJECTIONS],
  );
  return rows.map((r) => ({ row: r.line, code: r.code, reason: r.reason }));
}

export async function stagedLineRange(client: Sql, s: Staging): Promise<{ first: number; last: number } | undefined> {
  const { rows } = await client.query<{ first: number | null; last: number | null }>(`SELECT min(line) AS first, max(line) AS last FROM ${s.rows}`);
  const { first, last } = rows[0]!;
  return first === null || last === null ? undefined : { first, last };
}

export interface MergedBatch {
  inserted: number;
  /** Rows refused at the merge: their code (sourceId) was taken meanwhile. */
  late: number;
}

/** What a row is refused with when its key was taken by someone else between the set checks and its batch. */
const LATE_REJECTIONS = {
  code: ['code_exists', 'a voucher with this code was created during the import'],
  source_id: ['source_id_exists', 'a customer with this sourceId was created during the import'],
} as const;

/**
 * The tail of a merge statement, after its `batch` and `inserted` CTEs: the batch's rows that were not inserted are
 * refused (with $5, $6 of LATE_REJECTIONS), and the import's counts move in the same statement ($1 workspace, $2 import).
 */
function lateRowsAndProgress(s: Staging, key: keyof typeof LATE_REJECTIONS): string {
  return `late AS (
       INSERT INTO ${s.rejections} (line, code, reason)
       SELECT b.line, $5, $6 FROM batch b
       WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i.${key} = b.${key})
       RETURNING line
     ), counts AS (
       SELECT (SELECT count(*) FROM inserted)::int AS inserted, (SELECT count(*) FROM late)::int AS late
     ), progress AS (
       UPDATE imports SET rows_inserted = rows_inserted + counts.inserted, rows_rejected = rows_rejected + counts.late, heartbeat_at = now()
       FROM counts WHERE workspace_id = $1 AND id = $2
     )`;
}

/**
 * One batch of vouchers (rows `from`..`to`), in code order so that two imports meeting on codes lock them in the same
 * order; the template's fields under the row's own; gift cards with their CREDITS_ADDED entry; the import's counts
 * moved in the same statement.
 */
export async function mergeVoucherBatch(client: Sql, s: Staging, workspaceId: string, importId: string, from: number, to: number): Promise<MergedBatch> {
  const { rows } = await client.query<{ inserted: number; late: number }>(
    `WITH batch AS (
       SELECT r.line, r.code, r.campaign_id, t.type, t.discount, t.currency, COALESCE(r.active, t.active) AS active,
         COALESCE(r.start_date, t.start_date) AS start_date, COALESCE(r.expiration_date, t.expiration_date) AS expiration_date,
         COALESCE(r.redemption_limit, t.redemption_limit) AS redemption_limit,
         COALESCE(r.per_customer_limit, t.per_customer_limit) AS per_customer_limit, t.priority, t.exclusive,
         COALESCE(r.max_discount, t.max_discount) AS max_discount,
         CASE WHEN t.type = 'GIFT_CARD' THEN COALESCE(r.gift_amount, t.gift_amount) END AS gift_amount,
         t.validation_rule_ids, t.schedule, COALESCE(r.metadata, t.metadata) AS metadata
       FROM ${s.rows} r JOIN ${s.templates} t ON t.campaign_id = r.campaign_id
       WHERE r.line BETWEEN $3 AND $4 AND NOT EXISTS (SELECT 1 FROM ${s.rejections} x WHERE x.line = r.line)
       ORDER BY r.code COLLATE "C"
     ), inserted AS (
       INSERT INTO vouchers (workspace_id, campaign_id, code, type, discount, currency, active, start_date, expiration_date,
         redemption_limit, per_customer_limit, priority, exclusive, max_discount, gift_amount, gift_balance, validation_rule_ids,
         metadata, schedule)
       SELECT $1, campaign_id, code, type, discount, currency, active, start_date, expiration_date, redemption_limit,
         per_customer_limit, priority, exclusive, max_discount, gift_amount, gift_amount, validation_rule_ids, metadata, schedule
       FROM batch
       ON CONFLICT (workspace_id, code) DO NOTHING
       RETURNING id, code, gift_balance
     ), credits AS (
       INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after)
       SELECT $1, id, 'CREDITS_ADDED', gift_balance, gift_balance FROM inserted WHERE gift_balance IS NOT NULL
     ), ${lateRowsAndProgress(s, 'code')}
     SELECT inserted, late FROM counts`,
    [workspaceId, importId, from, to, ...LATE_REJECTIONS.code],
  );
  return rows[0]!;
}

export interface InsertedCustomer {
  id: string;
  sourceId: string;
  email: string | null;
  name: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
}

/** One batch of customers (rows `from`..`to`), in sourceId order, inside the caller's transaction; the created ones. */
export async function mergeCustomerBatch(
  tx: Sql,
  s: Staging,
  workspaceId: string,
  importId: string,
  from: number,
  to: number,
): Promise<MergedBatch & { customers: InsertedCustomer[] }> {
  const { rows } = await tx.query<{ id: string | null; source_id: string; email: string | null; name: string | null; metadata: Record<string, unknown>; created_at: Date; inserted: number; late: number }>(
    `WITH batch AS (
       SELECT r.line, r.source_id, r.email, r.name, COALESCE(r.metadata, '{}'::jsonb) AS metadata
       FROM ${s.rows} r
       WHERE r.line BETWEEN $3 AND $4 AND NOT EXISTS (SELECT 1 FROM ${s.rejections} x WHERE x.line = r.line)
       ORDER BY r.source_id COLLATE "C"
     ), inserted AS (
       INSERT INTO customers (workspace_id, source_id, email, name, metadata)
       SELECT $1, source_id, email, name, metadata FROM batch
       ON CONFLICT (workspace_id, source_id) DO NOTHING
       RETURNING id, source_id, email, name, metadata, created_at
     ), ${lateRowsAndProgress(s, 'source_id')}
     SELECT i.id, i.source_id, i.email, i.name, i.metadata, i.created_at, c.inserted, c.late
     FROM counts c LEFT JOIN inserted i ON true`,
    [workspaceId, importId, from, to, ...LATE_REJECTIONS.source_id],
  );
  const head = rows[0] ?? { inserted: 0, late: 0 };
  const customers = rows
    .filter((r) => r.id !== null)
    .map((r) => ({ id: r.id!, sourceId: r.source_id, email: r.email, name: r.name, metadata: r.metadata, createdAt: r.created_at.toISOString() }));
  return { inserted: head.inserted, late: head.late, customers };
}

/** Planner statistics of a table that just grew by many rows. */
export async function analyzeTable(db: Sql, kind: ImportKind): Promise<void> {
  await db.query(kind === 'vouchers' ? 'ANALYZE vouchers' : 'ANALYZE customers');
}
