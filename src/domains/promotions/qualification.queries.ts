// SQL of qualification: what a qualification reads before it decides, in one statement (the workspace's promotions
// version, the index's freshness check; the customer's facts; the codes assigned or published to the customer). The
// statements are named prepared statements (planned once per connection).
import { preparedQuery, type Sql } from '../../platform/database.js';
import type { CustomerFacts } from '../../checkout/condition.rules.js';
import { customerFactsSelect, toCustomerFacts, type CustomerFactsRow, type CustomerLookup } from '../segments/index.js';

export interface QualificationReads {
  /** Bumped by triggers on tier, rule and campaign changes, and by workspace-setting updates. */
  version: string;
  /** The customer the lookup names, when it names one that exists. */
  customer: CustomerFacts | undefined;
  /** The customer's newest active codes (at most the limit asked; [] when none were asked or no customer was found). */
  codes: string[];
}

type ReadsRow = Partial<CustomerFactsRow> & { v: string; codes: string[] | null };

/**
 * The promotions version, and with a lookup the customer's facts and (codesLimit > 0) codes, in one round trip: the
 * three reads every qualification needs, which as three statements cost three times the protocol and wake-ups.
 */
export async function findQualificationReads(
  db: Sql,
  workspaceId: string,
  ref: CustomerLookup | undefined,
  codesLimit: number,
): Promise<QualificationReads> {
  const select = ref && customerFactsSelect(ref);
  if (!select) {
    const { rows } = await preparedQuery<{ v: string }>(db, 'promotions-version', 'SELECT promotions_version::text AS v FROM workspaces WHERE workspace_id = $1', [workspaceId]);
    return { version: rows[0]?.v ?? '0', customer: undefined, codes: [] };
  }
  const { rows } = await preparedQuery<ReadsRow>(
    db,
    `qualification-reads-by-${select.by}`,
    `SELECT w.promotions_version::text AS v, c.*,
       CASE WHEN $3::int > 0 AND c.id IS NOT NULL THEN ARRAY(
         SELECT v.code FROM vouchers v WHERE v.workspace_id = $1 AND v.customer_id = c.id AND v.kind = 'CODE' AND v.active
         ORDER BY v.created_at DESC LIMIT $3) END AS codes
     FROM workspaces w LEFT JOIN LATERAL (${select.sql}) c ON true
     WHERE w.workspace_id = $1`,
    [workspaceId, select.value, codesLimit],
  );
  const row = rows[0];
  if (!row) return { version: '0', customer: undefined, codes: [] };
  return { version: row.v, customer: row.id ? toCustomerFacts(row as CustomerFactsRow) : undefined, codes: row.codes ?? [] };
}
