// Bulk imports: the import job resource, the operations' inputs, and the rows each kind takes (CSV columns or NDJSON
// fields), checked in TypeScript before they are staged.
import { z } from 'zod';
import { Metadata, Money, Timestamp, Uuid } from '../../contract/common.schemas.js';
import { StreamedBody } from '../../contract/operation.js';
import { Customer } from '../customers/customer.schemas.js';
import { PerCustomerLimit, RedemptionLimit } from '../../contract/voucher-template.schemas.js';
import { VoucherCode } from '../../contract/common.schemas.js';

export const IMPORT_KINDS = ['vouchers', 'customers'] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

export const IMPORT_MEDIA_TYPES = ['text/csv', 'application/x-ndjson'] as const;
export const ImportFormat = z.enum(['csv', 'ndjson']).meta({ description: 'CSV with a header row, or one JSON object per line.' });
export type ImportFormat = z.infer<typeof ImportFormat>;

export const ImportStatus = z
  .enum(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED'])
  .meta({ id: 'ImportStatus', description: 'PENDING: uploaded, waiting; RUNNING: being checked and merged; then SUCCEEDED or FAILED.' });
export type ImportStatus = z.infer<typeof ImportStatus>;

/** Why a row was not imported (closed list). */
export const RejectionCode = z
  .enum(['invalid_row', 'duplicate_in_file', 'code_exists', 'source_id_exists', 'campaign_required', 'campaign_not_found', 'campaign_not_importable'])
  .meta({ id: 'ImportRejectionCode' });
export type RejectionCode = z.infer<typeof RejectionCode>;

export const ImportRejection = z
  .object({
    row: z.number().int().min(1).meta({ description: 'The data row, counted from 1 (a CSV header is not a row; NDJSON: the line).' }),
    code: RejectionCode,
    reason: z.string(),
  })
  .meta({ id: 'ImportRejection' });
export type ImportRejection = z.infer<typeof ImportRejection>;

/** At most this many rejections are kept per import, the first by row. */
export const MAX_REPORTED_REJECTIONS = 100;

export const Import = z
  .object({
    id: Uuid,
    kind: z.enum(IMPORT_KINDS),
    status: ImportStatus,
    format: ImportFormat,
    campaignId: Uuid.nullable().meta({ description: 'The campaign of rows that name none (vouchers).' }),
    counts: z.object({
      read: z.number().int().min(0).meta({ description: 'Data rows read from the body.' }),
      inserted: z.number().int().min(0),
      rejected: z.number().int().min(0),
    }),
    rejections: z.array(ImportRejection).meta({ description: `The first ${MAX_REPORTED_REJECTIONS} rejections, by row.` }),
    error: z.string().nullable().meta({ description: 'Why a FAILED import stopped (rows merged before it stay).' }),
    createdAt: Timestamp,
    startedAt: Timestamp.nullable(),
    finishedAt: Timestamp.nullable(),
  })
  .meta({ id: 'Import', description: 'A bulk import: a job whose counts grow while it runs.' });
export type Import = z.infer<typeof Import>;

function isRowsValue(value: unknown): value is string | StreamedBody {
  return typeof value === 'string' || value instanceof StreamedBody;
}

const ImportRows = z.custom<string | StreamedBody>(isRowsValue, { message: 'expected the rows as CSV or NDJSON text' }).meta({
  type: 'string',
  description:
    'The rows: CSV with a header row, or NDJSON. REST streams them as the whole body (Content-Type text/csv or ' +
    'application/x-ndjson); a JSON body or RPC sends them as this text field.',
});

export const ImportBody = z.object({ rows: ImportRows });

export const VoucherImportQuery = z.object({
  campaignId: Uuid.optional().meta({ description: 'The campaign of rows without a campaignId column or field.' }),
  format: ImportFormat.optional().meta({ description: 'For a JSON body: how `rows` is written (default csv). A streamed body says it by its Content-Type.' }),
});

export const CustomerImportQuery = VoucherImportQuery.pick({ format: true });

export const ImportParams = z.object({ id: Uuid });

/** A voucher row: its code, its campaign (else the query's), and what it sets over the campaign's voucher template. */
export const VoucherImportRow = z
  .object({
    code: VoucherCode,
    campaignId: Uuid.optional(),
    active: z.boolean().optional(),
    startDate: Timestamp.optional(),
    expirationDate: Timestamp.optional(),
    redemptionLimit: RedemptionLimit.optional(),
    perCustomerLimit: PerCustomerLimit.optional(),
    maxDiscount: Money.optional(),
    gift: z.strictObject({ amount: Money }).optional(),
    metadata: Metadata.optional(),
  })
  .strict();
export type VoucherImportRow = z.infer<typeof VoucherImportRow>;

export const CustomerImportRow = z
  .object({
    sourceId: Customer.shape.sourceId.unwrap(),
    email: Customer.shape.email.unwrap().optional(),
    name: Customer.shape.name.unwrap().optional(),
    metadata: Metadata.optional(),
  })
  .strict();
export type CustomerImportRow = z.infer<typeof CustomerImportRow>;
