// A conversion by custom event (`POST /custom-events` with `referral.code`): no redemption, so no partition decides
// it; the code's voucher row is locked instead, the same refusals are checked in the same order, and the conversion
// takes one of the code's uses (its cap) in that transaction. The engine never answers a referral code from its cache
// and guards its own counter update, so both roads share one cap and one conversion per referee and program.
import { uuidv7 } from '../../platform/ids.js';
import type { Sql } from '../../platform/database.js';
import type { EventType } from '../../contract/event.schemas.js';
import type { ReferralSettings } from '../campaigns/index.js';

export type EventConversion =
  | { type: 'REFERRAL_CONVERTED'; conversionId: string; programId: string; code: string; status: 'PENDING' | 'CONFIRMED' }
  | { type: 'REFERRAL_REFUSED'; code: string; reason: RefusalCode };

type RefusalCode = 'voucher_not_found' | 'voucher_disabled' | 'referral_self_use' | 'referee_not_new' | 'referee_already_referred' | 'referrer_limit_reached';

interface LockedCode {
  [column: string]: unknown;
  id: string;
  code: string;
  campaign_id: string;
  referrer_customer_id: string;
  active: boolean;
  redemption_limit: number | null;
  redeemed_count: number;
  referral: ReferralSettings;
  self: boolean;
  paid: boolean;
  referred: boolean;
}

/**
 * Converts `refereeId` through `code` in the caller's transaction; a refusal changes nothing. `eventId`: the custom
 * event the conversion stems from (kept as its source).
 */
export async function convertByEvent(
  tx: Sql,
  emit: (type: EventType, payload: Record<string, unknown>) => void,
  workspaceId: string,
  code: string,
  refereeId: string,
): Promise<EventConversion> {
  const { rows } = await tx.query<LockedCode>(
    `SELECT v.id, v.code, v.campaign_id, v.referrer_customer_id, v.active, v.redemption_limit, v.redeemed_count, c.referral,
            (v.referrer_customer_id = e.id
              OR (e.email IS NOT NULL AND lower(e.email) = lower(r.email))
              OR (e.source_id IS NOT NULL AND e.source_id = r.source_id)) AS self,
            EXISTS (SELECT 1 FROM orders o WHERE o.workspace_id = v.workspace_id AND o.customer_id = e.id AND o.status IN ('PAID', 'FULFILLED')) AS paid,
            EXISTS (SELECT 1 FROM referral_conversions x WHERE x.workspace_id = v.workspace_id AND x.program_id = v.campaign_id
                       AND x.referee_customer_id = e.id AND x.status <> 'REVERTED') AS referred
       FROM vouchers v
       JOIN campaigns c ON c.id = v.campaign_id AND c.referral IS NOT NULL
       JOIN customers e ON e.workspace_id = v.workspace_id AND e.id = $3
       LEFT JOIN customers r ON r.workspace_id = v.workspace_id AND r.id = v.referrer_customer_id
      WHERE v.workspace_id = $1 AND v.code = $2 AND v.referrer_customer_id IS NOT NULL
      FOR UPDATE OF v`,
    [workspaceId, code, refereeId],
  );
  const v = rows[0];
  const refuse = (reason: RefusalCode): EventConversion => ({ type: 'REFERRAL_REFUSED', code, reason });
  if (!v) return refuse('voucher_not_found');
  if (!v.active) return refuse('voucher_disabled');
  if (v.self) return refuse('referral_self_use');
  if (v.referral.refereeMustBeNew && v.paid) return refuse('referee_not_new');
  if (v.referred) return refuse('referee_already_referred');
  if (v.redemption_limit !== null && v.redeemed_count >= v.redemption_limit) return refuse('referrer_limit_reached');
  // An event has no order to wait for: its conversion is confirmed at once.
  const status = 'CONFIRMED';
  const id = uuidv7();
  const inserted = await tx.query(
    `INSERT INTO referral_conversions (workspace_id, id, program_id, voucher_id, code, referrer_customer_id, referee_customer_id, status, confirmed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
     ON CONFLICT (workspace_id, program_id, referee_customer_id) WHERE status <> 'REVERTED' DO NOTHING`,
    [workspaceId, id, v.campaign_id, v.id, v.code, v.referrer_customer_id, refereeId, status],
  );
  if (inserted.rowCount !== 1) return refuse('referee_already_referred');
  await tx.query('UPDATE vouchers SET redeemed_count = redeemed_count + 1 WHERE id = $1', [v.id]);
  const payload = { conversionId: id, programId: v.campaign_id, code: v.code, referrerCustomerId: v.referrer_customer_id, refereeCustomerId: refereeId, status };
  emit('referral.conversion.created', payload);
  emit('referral.conversion.confirmed', payload);
  return { type: 'REFERRAL_CONVERTED', conversionId: id, programId: v.campaign_id, code: v.code, status };
}
