// SQL of publications, with the two statements that reach campaigns and vouchers under the publishing transaction's
// locks (the campaign row lock, a free code taken with SKIP LOCKED): parameterized, explicit columns.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage } from '../../platform/pagination.js';
import type { VoucherTemplate } from '../../contract/voucher-template.schemas.js';
import type { ListPublicationsQuery, Publication } from './publication.schemas.js';

// Publications with their voucher's code, as one relation: lists page over it like over a table.
const WITH_CODE = `(SELECT p.workspace_id, p.id, p.campaign_id, p.customer_id, p.voucher_id, v.code AS voucher_code, p.metadata,
    p.created_at FROM publications p JOIN vouchers v ON v.id = p.voucher_id) AS publications`;
const COLUMNS = 'id, campaign_id, customer_id, voucher_id, voucher_code, metadata, created_at';

interface PublicationRow {
  [column: string]: unknown;
  id: string;
  campaign_id: string;
  customer_id: string;
  voucher_id: string;
  voucher_code: string;
  metadata: Record<string, unknown>;
  created_at: Date;
}

function toPublication(row: PublicationRow): Publication {
  return {
    id: row.id,
    campaignId: row.campaign_id,
    customerId: row.customer_id,
    voucher: { id: row.voucher_id, code: row.voucher_code },
    metadata: row.metadata,
    createdAt: row.created_at.toISOString(),
  };
}

/** What publishing needs to know of a campaign. */
export interface PublishingCampaign {
  id: string;
  type: string;
  active: boolean;
  expired: boolean;
  currency: string | null;
  voucherTemplate: VoucherTemplate | null;
  oncePerCustomer: boolean;
}

/**
 * The campaign, its row locked until the transaction ends: publications of one campaign take turns, so the
 * once-per-customer check and the code taken cannot interleave. NO KEY UPDATE leaves foreign-key checks
 * (vouchers inserted into the campaign elsewhere) unblocked.
 */
export async function lockCampaign(tx: Sql, workspaceId: string, campaignId: string): Promise<PublishingCampaign | undefined> {
  const { rows } = await tx.query<{
    id: string;
    type: string;
    active: boolean;
    expired: boolean;
    currency: string | null;
    voucher_template: VoucherTemplate | null;
    once_per_customer: boolean;
  }>(
    `SELECT id, type, active, coalesce(expiration_date < now(), false) AS expired, currency, voucher_template, once_per_customer
     FROM campaigns WHERE workspace_id = $1 AND id = $2 FOR NO KEY UPDATE`,
    [workspaceId, campaignId],
  );
  const row = rows[0];
  return (
    row && {
      id: row.id,
      type: row.type,
      active: row.active,
      expired: row.expired,
      currency: row.currency,
      voucherTemplate: row.voucher_template,
      oncePerCustomer: row.once_per_customer,
    }
  );
}

/** The customer's first publication of the campaign. */
export async function findCustomerPublication(
  db: Sql,
  workspaceId: string,
  campaignId: string,
  customerId: string,
): Promise<Publication | undefined> {
  const { rows } = await db.query<PublicationRow>(
    `SELECT ${COLUMNS} FROM ${WITH_CODE}
     WHERE workspace_id = $1 AND campaign_id = $2 AND customer_id = $3 ORDER BY created_at, id LIMIT 1`,
    [workspaceId, campaignId, customerId],
  );
  return rows[0] && toPublication(rows[0]);
}

/**
 * Assigns the campaign's oldest free code to the customer: an active, unassigned, unpublished, usable code. SKIP LOCKED
 * passes over codes another transaction holds (a redemption committing), so no publication waits on one.
 */
export async function assignFreeVoucher(
  tx: Sql,
  workspaceId: string,
  campaignId: string,
  customerId: string,
): Promise<{ id: string; code: string } | undefined> {
  const { rows } = await tx.query<{ id: string; code: string }>(
    `WITH free AS (
       SELECT v.id FROM vouchers v
       WHERE v.workspace_id = $1 AND v.campaign_id = $2 AND v.kind = 'CODE' AND v.active AND v.customer_id IS NULL
         AND (v.expiration_date IS NULL OR v.expiration_date > now())
         AND (v.redemption_limit IS NULL OR v.redeemed_count < v.redemption_limit)
         AND NOT EXISTS (SELECT 1 FROM publications p WHERE p.voucher_id = v.id)
       ORDER BY v.created_at, v.id
       LIMIT 1
       FOR UPDATE SKIP LOCKED
     )
     UPDATE vouchers v SET customer_id = $3, updated_at = now() FROM free WHERE v.id = free.id RETURNING v.id, v.code`,
    [workspaceId, campaignId, customerId],
  );
  return rows[0];
}

export async function insertPublication(
  tx: Sql,
  workspaceId: string,
  fields: { campaignId: string; voucher: { id: string; code: string }; customerId: string; metadata: Record<string, unknown> },
): Promise<Publication> {
  const { rows } = await tx.query<PublicationRow>(
    `INSERT INTO publications (workspace_id, campaign_id, voucher_id, customer_id, metadata) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, campaign_id, customer_id, voucher_id, $6::text AS voucher_code, metadata, created_at`,
    [workspaceId, fields.campaignId, fields.voucher.id, fields.customerId, fields.metadata, fields.voucher.code],
  );
  return toPublication(rows[0]!);
}

export async function findPublication(db: Sql, workspaceId: string, id: string): Promise<Publication | undefined> {
  const { rows } = await db.query<PublicationRow>(`SELECT ${COLUMNS} FROM ${WITH_CODE} WHERE workspace_id = $1 AND id = $2`, [
    workspaceId,
    id,
  ]);
  return rows[0] && toPublication(rows[0]);
}

export function listPublications(db: Sql, cursors: CursorCodec, workspaceId: string, request: ListPublicationsQuery) {
  const where = ['workspace_id = $1'];
  const params: unknown[] = [workspaceId];
  if (request.campaignId !== undefined) {
    params.push(request.campaignId);
    where.push(`campaign_id = $${params.length}`);
  }
  if (request.customerId !== undefined) {
    params.push(request.customerId);
    where.push(`customer_id = $${params.length}`);
  }
  return keysetPage<PublicationRow, Publication>(
    db,
    cursors,
    { list: 'publications.list', from: WITH_CODE, columns: COLUMNS, where, params, map: toPublication },
    request,
  );
}
