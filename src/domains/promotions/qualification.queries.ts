// SQL of qualification: the workspace's promotions version (the index's freshness check) and the codes assigned or
// published to a customer. The statements every qualification runs are named prepared statements (planned once per
// connection).
import { preparedQuery, type Sql } from '../../platform/database.js';
import { customerIdSubquery, type CustomerLookup } from '../segments/index.js';

/** Bumped by triggers on tier, rule and campaign changes, and by workspace-setting updates. */
export async function findPromotionsVersion(db: Sql, workspaceId: string): Promise<string> {
  const { rows } = await preparedQuery<{ v: string }>(db, 'promotions-version', 'SELECT promotions_version::text AS v FROM workspaces WHERE workspace_id = $1', [workspaceId]);
  return rows[0]?.v ?? '0';
}

/**
 * The newest active codes assigned (or published) to the customer a lookup names (id, sourceId or email), found in one
 * statement with the customer, so that it can run while the customer's facts are read; [] when it finds no one.
 */
export async function findCustomerCodesOf(db: Sql, workspaceId: string, ref: CustomerLookup, limit: number): Promise<string[]> {
  const customer = customerIdSubquery(ref);
  if (!customer) return [];
  const { rows } = await preparedQuery<{ code: string }>(
    db,
    `customer-codes-by-${customer.by}`,
    `SELECT code FROM vouchers WHERE workspace_id = $1 AND customer_id = ${customer.sql} AND kind = 'CODE' AND active ORDER BY created_at DESC LIMIT $3`,
    [workspaceId, customer.value, limit],
  );
  return rows.map((r) => r.code);
}
