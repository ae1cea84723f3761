// The schema and the hot path against the distribution plan (docs/scale-out-database.md): every table placed; every
// break of the Citus rules listed in KNOWN_EXCEPTIONS with its reason, so a new table or constraint that breaks one
// fails here; and every row a request writes lands in the workspace (so the shard group) of that request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  crossWorkspaceReferences,
  currentXid,
  findViolations,
  foreignKeys,
  listTables,
  workspacesWrittenSince,
} from './distribution-catalog.js';
import { DISTRIBUTED, IMPLIED_REFERENCES, KNOWN_EXCEPTIONS, LOCAL, placementOf, REFERENCE } from './distribution-plan.js';
import { runHotPath } from './hot-path-writes.js';

/** The distributed tables one redemption, rollback, gift card and stack must write (all in the request's workspace). */
const HOT_PATH_TABLES = [
  'vouchers', 'campaigns', 'customers', 'redemptions', 'redemption_rollbacks', 'gift_ledger_entries',
  'voucher_sessions', 'idempotency_keys', 'campaign_budget_usage', 'events', 'redemption_rollups', 'audit_entries',
];

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

describe('the schema against the Citus rules (distribution column workspace_id)', () => {
  it('places every table of the schema, and only those', async () => {
    const tables = await listTables(db.pool);
    expect(tables.filter((t) => placementOf(t) === undefined), 'tables without a placement in distribution-plan.ts').toEqual([]);
    const planned = [...DISTRIBUTED, ...REFERENCE, ...LOCAL];
    expect(planned.filter((t) => !tables.includes(t)), 'planned tables the schema does not have').toEqual([]);
    expect(new Set(planned).size, 'a table placed twice').toBe(planned.length);
  });

  it('breaks the rules only where KNOWN_EXCEPTIONS says so, and every exception still applies', async () => {
    const violations = await findViolations(db.pool);
    const known = new Set(KNOWN_EXCEPTIONS.map((e) => `${e.rule}:${e.table}.${e.constraint}`));
    expect(known.size, 'an exception listed twice').toBe(KNOWN_EXCEPTIONS.length);
    const unlisted = violations.filter((v) => !known.has(v.id)).map((v) => `${v.id}  ${v.detail}`);
    expect(unlisted, 'new breaks of the distribution rules: fix them, or list them with a reason').toEqual([]);
    const found = new Set(violations.map((v) => v.id));
    expect([...known].filter((id) => !found.has(id)), 'exceptions that no longer break a rule: remove them').toEqual([]);
  });

  it('catches a unique key without workspace_id and a reference table pointing at a distributed one', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE vouchers ADD CONSTRAINT vouchers_code_anywhere UNIQUE (code)');
      await client.query('ALTER TABLE api_keys ADD COLUMN voucher_id uuid CONSTRAINT api_keys_voucher_fkey REFERENCES vouchers (id)');
      await client.query('ALTER TABLE redemptions ADD CONSTRAINT redemptions_voucher_fkey FOREIGN KEY (voucher_id) REFERENCES vouchers (id)');
      const ids = (await findViolations(client)).map((v) => v.id);
      expect(ids).toEqual(expect.arrayContaining([
        'unique-key:vouchers.vouchers_code_anywhere',
        'reference-to-distributed:api_keys.api_keys_voucher_fkey',
        'foreign-key:redemptions.redemptions_voucher_fkey',
      ]));
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});

describe('the hot path keeps each request in its workspace (co-location)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ database: db });
  });
  afterAll(async () => service?.close());

  it('writes every row of a redemption, rollback, gift card and stack in the workspace of the request', async () => {
    // A neighbour first, so that a join or lookup that ignored the workspace would have someone else's rows to find.
    const neighbour = await service.newWorkspace();
    await runHotPath(neighbour.api);
    const { workspaceId, api } = await service.newWorkspace();
    const since = await currentXid(db.pool);
    const run = await runHotPath(api);

    const written = await workspacesWrittenSince(db.pool, DISTRIBUTED, since);
    const foreign = [...written].filter(([, byWorkspace]) => [...byWorkspace.keys()].some((w) => w !== workspaceId));
    expect(foreign.map(([table, byWorkspace]) => `${table}: ${JSON.stringify(Object.fromEntries(byWorkspace))}`)).toEqual([]);
    expect([...written.keys()]).toEqual(expect.arrayContaining(HOT_PATH_TABLES));

    const q = async (text: string, values: unknown[]) => (await db.pool.query<{ w: string; n: number }>(text, values)).rows;
    const only = (rows: Array<{ w: string; n: number }>, n: number) => {
      expect(rows.map((r) => r.w)).toEqual([workspaceId]);
      expect(rows[0]!.n).toBe(n);
    };
    only(await q('SELECT workspace_id AS w, count(*)::int AS n FROM redemptions WHERE id = ANY($1) GROUP BY 1', [run.redemptionIds]), 5);
    only(await q('SELECT workspace_id AS w, count(*)::int AS n FROM redemption_rollbacks WHERE redemption_id = $1 GROUP BY 1', [run.rolledBackId]), 1);
    only(await q('SELECT workspace_id AS w, count(*)::int AS n FROM gift_ledger_entries WHERE voucher_id = $1 GROUP BY 1', [run.giftCardId]), 3);
    only(await q(`SELECT workspace_id AS w, count(*)::int AS n FROM idempotency_keys
                   WHERE key LIKE ANY (SELECT '%' || k || '%' FROM unnest($1::text[]) k) GROUP BY 1`, [run.idempotencyKeys]), 3);
    only(await q('SELECT workspace_id AS w, count(*)::int AS n FROM voucher_sessions WHERE voucher_id = ANY($1) GROUP BY 1', [run.voucherIds]), 1);
    only(await q('SELECT workspace_id AS w, count(*)::int AS n FROM campaign_budget_usage WHERE campaign_id = $1 GROUP BY 1', [run.campaignId]), 1);
    only(await q('SELECT workspace_id AS w, count(*)::int AS n FROM customers WHERE source_id = $1 GROUP BY 1', [run.customerSourceId]), 1);
    const events = await q(`SELECT workspace_id AS w, count(DISTINCT payload->>'redemptionId')::int AS n FROM events
                             WHERE payload->>'redemptionId' = ANY($1) GROUP BY 1`, [run.redemptionIds]);
    only(events, 5);
    // The rollup's figures of each workspace are exactly its own requests (5 redemptions, 1 rollback each).
    const rollups = await db.pool.query<{ w: string; redemptions: string; rollbacks: string }>(
      `SELECT workspace_id AS w, sum(redemptions)::text AS redemptions, sum(rollbacks)::text AS rollbacks
         FROM redemption_rollups WHERE workspace_id = ANY($1) GROUP BY 1 ORDER BY 1`,
      [[workspaceId, neighbour.workspaceId]],
    );
    expect(rollups.rows.map((r) => [r.redemptions, r.rollbacks])).toEqual([['5', '1'], ['5', '1']]);
  });

  it('keeps every reference, declared or implied, inside one workspace', async () => {
    const declared = (await foreignKeys(db.pool))
      .filter((fk) => placementOf(fk.child) === 'distributed' && placementOf(fk.parent) === 'distributed')
      .flatMap((fk) => (fk.child_columns.length === 1 ? [[fk.child, fk.child_columns[0]!, fk.parent, fk.parent_columns[0]!] as const] : []));
    const crossing = await crossWorkspaceReferences(db.pool, [...declared, ...IMPLIED_REFERENCES]);
    expect(crossing.length).toBeGreaterThan(30);
    expect(crossing.filter((c) => c.rows > 0)).toEqual([]);
  });
});
