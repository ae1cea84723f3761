// SQL of qualification: the workspace's promotions version (the index's freshness check) and the codes assigned or
// published to a customer.
import type { Sql } from '../../platform/database.js';

/** Bumped by triggers on tier, rule and campaign changes, and by workspace-setting updates. */
export async function findPromotionsVersion(db: Sql, workspaceId: string): Promise<string> {
  const { rows } = await db.query<{ v: string }>('SELECT promotions_version::text AS v FROM workspaces WHERE workspace_id = $1', [workspaceId]);
  return rows[0]?.v ?? '0';
}

/** The newest active codes assigned (or published) to the customer. */
export async function findCustomerCodes(db: Sql, workspaceId: string, customerId: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ code: string }>(
    `SELECT code FROM vouchers WHERE workspace_id = $1 AND customer_id = $2 AND kind = 'CODE' AND active ORDER BY created_at DESC LIMIT $3`,
    [workspaceId, customerId, limit],
  );
  return rows.map((r) => r.code);
}
