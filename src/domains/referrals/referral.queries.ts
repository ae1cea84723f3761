// SQL of referral programs: the program, referrer codes (vouchers with referrer_customer_id) and their counts, and
// conversions with their outcomes.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import type { ReferralSettings } from '../campaigns/index.js';
import type { VoucherTemplate } from '../../contract/voucher-template.schemas.js';
import type { Conversion, ReferralCode } from './referral.schemas.js';

export interface ReferralProgram {
  id: string;
  type: string;
  currency: string | null;
  voucher: VoucherTemplate | null;
  referral: ReferralSettings;
}

export async function findReferralProgram(db: Sql, workspaceId: string, id: string): Promise<ReferralProgram | undefined> {
  const { rows } = await db.query<{ id: string; type: string; currency: string | null; voucher_template: VoucherTemplate | null; referral: ReferralSettings | null }>(
    `SELECT id, type, currency, voucher_template, referral FROM campaigns WHERE workspace_id = $1 AND id = $2 AND type = 'REFERRAL_PROGRAM'`,
    [workspaceId, id],
  );
  const r = rows[0];
  return r && r.referral ? { id: r.id, type: r.type, currency: r.currency, voucher: r.voucher_template, referral: r.referral } : undefined;
}

/** Serializes code creation per referrer and program (the customer row is locked until the transaction ends). */
export async function lockReferrer(tx: Sql, workspaceId: string, customerId: string): Promise<void> {
  await tx.query('SELECT 1 FROM customers WHERE workspace_id = $1 AND id = $2 FOR UPDATE', [workspaceId, customerId]);
}

export async function markReferrer(tx: Sql, voucherId: string, referrerId: string): Promise<void> {
  await tx.query('UPDATE vouchers SET referrer_customer_id = $2 WHERE id = $1', [voucherId, referrerId]);
}

const CODE_SELECT = `SELECT v.code, v.campaign_id, v.referrer_customer_id, v.created_at,
            count(c.id) FILTER (WHERE c.status = 'PENDING')::int AS pending,
            count(c.id) FILTER (WHERE c.status = 'CONFIRMED')::int AS confirmed,
            count(c.id) FILTER (WHERE c.status = 'REVERTED')::int AS reverted
       FROM vouchers v LEFT JOIN referral_conversions c ON c.voucher_id = v.id AND c.workspace_id = v.workspace_id`;
const CODE_GROUP = 'GROUP BY v.id';

interface CodeRow {
  [column: string]: unknown;
  code: string;
  campaign_id: string;
  referrer_customer_id: string;
  created_at: Date;
  pending: number;
  confirmed: number;
  reverted: number;
}

function toCode(r: CodeRow): ReferralCode {
  return {
    code: r.code,
    programId: r.campaign_id,
    referrerCustomerId: r.referrer_customer_id,
    conversions: { pending: r.pending, confirmed: r.confirmed, reverted: r.reverted },
    createdAt: r.created_at.toISOString(),
  };
}

export async function findReferrerCode(db: Sql, workspaceId: string, programId: string, referrerId: string): Promise<ReferralCode | undefined> {
  const { rows } = await db.query<CodeRow>(
    `${CODE_SELECT} WHERE v.workspace_id = $1 AND v.campaign_id = $2 AND v.referrer_customer_id = $3 ${CODE_GROUP}`,
    [workspaceId, programId, referrerId],
  );
  return rows[0] && toCode(rows[0]);
}

export async function findReferralCode(db: Sql, workspaceId: string, code: string): Promise<ReferralCode | undefined> {
  const { rows } = await db.query<CodeRow>(
    `${CODE_SELECT} WHERE v.workspace_id = $1 AND v.code = $2 AND v.referrer_customer_id IS NOT NULL ${CODE_GROUP}`,
    [workspaceId, code],
  );
  return rows[0] && toCode(rows[0]);
}

export async function listCustomerCodes(db: Sql, workspaceId: string, customerId: string): Promise<ReferralCode[]> {
  const { rows } = await db.query<CodeRow>(
    `${CODE_SELECT} WHERE v.workspace_id = $1 AND v.referrer_customer_id = $2 ${CODE_GROUP} ORDER BY v.created_at DESC`,
    [workspaceId, customerId],
  );
  return rows.map(toCode);
}

const CONVERSIONS = `(SELECT c.*, (SELECT coalesce(json_agg(json_build_object('side', o.side, 'rewardId', o.reward_id, 'status', o.status,
                                                                    'issued', o.issued) ORDER BY o.side DESC, o.reward_id), '[]')
                         FROM referral_outcomes o WHERE o.conversion_id = c.id) AS outcomes
                      FROM referral_conversions c) AS c`;
const CONVERSION_COLUMNS = 'id, program_id, code, referrer_customer_id, referee_customer_id, order_id, redemption_id, status, outcomes, created_at';

interface ConversionRow {
  [column: string]: unknown;
  id: string;
  program_id: string;
  code: string;
  referrer_customer_id: string;
  referee_customer_id: string;
  order_id: string | null;
  redemption_id: string | null;
  status: Conversion['status'];
  outcomes: Array<{ side: 'REFERRER' | 'REFEREE'; rewardId: string; status: Conversion['outcomes'][number]['status']; issued: Record<string, unknown> | null }>;
  created_at: Date;
}

/** What an outcome issued, as the API shows it (the stored record also keeps the ids needed to take it back). */
export function publicIssued(issued: Record<string, unknown>): Record<string, unknown> {
  const { voucherCode, amount, points } = issued;
  return { ...(voucherCode !== undefined ? { voucherCode } : {}), ...(amount !== undefined ? { amount } : {}), ...(points !== undefined ? { points } : {}) };
}

function toConversion(r: ConversionRow): Conversion {
  return {
    id: r.id,
    programId: r.program_id,
    code: r.code,
    referrerCustomerId: r.referrer_customer_id,
    refereeCustomerId: r.referee_customer_id,
    ...(r.order_id !== null ? { orderId: r.order_id } : {}),
    ...(r.redemption_id !== null ? { redemptionId: r.redemption_id } : {}),
    status: r.status,
    outcomes: r.outcomes.map((o) => ({ side: o.side, rewardId: o.rewardId, status: o.status, ...(o.issued ? { issued: publicIssued(o.issued) } : {}) })),
    createdAt: r.created_at.toISOString(),
  };
}

export async function findConversion(db: Sql, workspaceId: string, id: string): Promise<Conversion | undefined> {
  const { rows } = await db.query<ConversionRow>(`SELECT ${CONVERSION_COLUMNS} FROM ${CONVERSIONS} WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0] && toConversion(rows[0]);
}

export function listConversions(db: Sql, cursors: CursorCodec, workspaceId: string, programId: string, request: PageRequest & { status?: Conversion['status'] | undefined }) {
  const where = ['workspace_id = $1', 'program_id = $2'];
  const params: unknown[] = [workspaceId, programId];
  if (request.status) {
    params.push(request.status);
    where.push(`status = $${params.length}`);
  }
  return keysetPage<ConversionRow, Conversion>(
    db,
    cursors,
    { list: 'referrals.conversions', from: CONVERSIONS, columns: CONVERSION_COLUMNS, where, params, map: toConversion },
    request,
  );
}
