// The refusal counts' one statement: adds a decider's counts to its rows (writer), saturating at 2^53-1.
import type { Sql } from '../../platform/database.js';
import { MAX_AMOUNT } from '../../contract/checkout.schemas.js';

export type RefusalSource = 'redemption' | 'stack' | 'validation';

export interface RefusalRow {
  workspaceId: string;
  campaignId: string | null;
  code: string;
  source: RefusalSource;
  hour: Date;
  count: number;
}

export async function addRefusalCounts(db: Sql, rows: readonly RefusalRow[], writer: number): Promise<void> {
  if (rows.length === 0) return;
  const col = <K extends keyof RefusalRow>(k: K) => rows.map((r) => r[k]);
  await db.query(
    `INSERT INTO refusal_counts AS c (workspace_id, campaign_id, code, source, hour, writer, count)
     SELECT w, campaign, code, source, hour, $7::smallint, least(n, ${MAX_AMOUNT})
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::bigint[]) AS r(w, campaign, code, source, hour, n)
      ORDER BY w, campaign, code, source, hour
     ON CONFLICT ON CONSTRAINT refusal_counts_key DO UPDATE SET count = least(c.count + EXCLUDED.count, ${MAX_AMOUNT})`,
    [col('workspaceId'), col('campaignId'), col('code'), col('source'), col('hour'), col('count'), writer],
  );
}
