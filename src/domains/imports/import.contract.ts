// Bulk import operations: vouchers and customers from CSV or NDJSON as one operation each, and the import job's status.
import { defineOperation } from '../../contract/operation.js';
import { CustomerImportQuery, IMPORT_MEDIA_TYPES, Import, ImportBody, ImportParams, VoucherImportQuery } from './import.schemas.js';

const bodyStream = { field: 'rows', mediaTypes: IMPORT_MEDIA_TYPES };

const HOW =
  'Stream the file as the body (Content-Type `text/csv` with a header row, or `application/x-ndjson`), up to ' +
  'IMPORT_MAX_BYTES (1 GiB by default); or send `{ "rows": "<text>" }` as JSON (1 MB). The answer comes once the body ' +
  'is read and staged: the import (202 Accepted, status PENDING) with the rows read and the rows already refused; the rows are ' +
  'then checked and merged in batches in the background: follow them at `GET /imports/{id}`. A row is refused alone ' +
  '(with its row number and reason); the others land. One audit entry records the import.';

export const importContract = {
  importVouchers: defineOperation({
    name: 'vouchers.import',
    method: 'post',
    path: '/vouchers/import',
    scope: 'vouchers:write',
    summary: 'Import vouchers with codes of your own, in bulk',
    description:
      `${HOW} Columns (CSV) or fields (NDJSON): \`code\` (required), \`campaignId\` (else the query's), \`active\`, ` +
      '`startDate`, `expirationDate`, `redemptionLimit`, `perCustomerLimit`, `maxDiscount`, `gift.amount`, `metadata` ' +
      '(an object; CSV: `metadata.<key>` columns or a JSON cell). Anything else comes from the campaign’s voucher ' +
      'template. Refused rows: `invalid_row`, `duplicate_in_file` (a code seen on an earlier row), `code_exists`, ' +
      '`campaign_required`, `campaign_not_found`, `campaign_not_importable` (its template makes no voucher, or a loyalty program).',
    tags: ['Vouchers'],
    query: VoucherImportQuery,
    body: ImportBody,
    bodyStream,
    output: Import,
    successStatus: 202,
  }),
  importCustomers: defineOperation({
    name: 'customers.import',
    method: 'post',
    path: '/customers/import',
    scope: 'customers:write',
    summary: 'Import customers in bulk',
    description:
      `${HOW} Columns (CSV) or fields (NDJSON): \`sourceId\` (required, your own id), \`email\`, \`name\`, \`metadata\`. ` +
      'Each customer created records `customer.created` and joins the AUTO segments it matches. Refused rows: ' +
      '`invalid_row`, `duplicate_in_file`, `source_id_exists`.',
    tags: ['Customers'],
    query: CustomerImportQuery,
    body: ImportBody,
    bodyStream,
    output: Import,
    successStatus: 202,
  }),
  getImport: defineOperation({
    name: 'imports.get',
    method: 'get',
    path: '/imports/{id}',
    scope: 'vouchers:read',
    summary: 'Get a bulk import: status, counts and the first rejections',
    description: 'A RUNNING import whose process stopped is shown FAILED once its heartbeat is 5 minutes old.',
    tags: ['Vouchers'],
    params: ImportParams,
    output: Import,
  }),
};
