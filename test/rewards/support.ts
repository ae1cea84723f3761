// Fixtures of the rewards tests: a reward offered in a program, a redemption request, a discount campaign rewards make
// vouchers from, and the events a workspace recorded.
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { ApiClient } from '../support/api-client.js';

/** Creates the reward and offers it in the program at `points` (and `tierPrices`); its id. */
export async function offered(api: ApiClient, programId: string, reward: Record<string, unknown>, points: number, tierPrices?: Array<{ tierId: string; points: number }>): Promise<string> {
  const created = await api.create('/api/v1/rewards', reward);
  await api.create(`/api/v1/loyalty/programs/${programId}/rewards`, { rewardId: created.id, points, ...(tierPrices ? { tierPrices } : {}) });
  return created.id;
}

export const redeem = (api: ApiClient, memberId: string, rewardId: string, extra: Record<string, unknown> = {}) =>
  api.post(`/api/v1/loyalty/members/${memberId}/reward-redemptions`, { rewardId, ...extra });

export const refund = (api: ApiClient, rewardRedemptionId: string) => api.post(`/api/v1/loyalty/reward-redemptions/${rewardRedemptionId}/refund`, {});

/** A DISCOUNT_COUPONS campaign whose vouchers take 10.00 EUR off. */
export async function discountCampaign(api: ApiClient): Promise<string> {
  const campaign = await api.create('/api/v1/campaigns', {
    name: `Coupons ${randomUUID().slice(0, 6)}`,
    type: 'DISCOUNT_COUPONS',
    currency: 'EUR',
    voucher: { type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 1_000 } },
  });
  return campaign.id;
}

/** The payloads of a workspace's events of one type, oldest first. */
export async function eventPayloads(pool: Pool, workspaceId: string, type: string): Promise<any[]> {
  const { rows } = await pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = $2 ORDER BY created_at, id`, [workspaceId, type]);
  return rows.map((r) => r.payload);
}
