// Reads an import body as a stream (UTF-8, CSV with a header or NDJSON) and checks every row in TypeScript: its fields
// and types, code format, amounts within 2^53-1, storable text. A good row becomes a line of COPY text for the staging
// table; a bad one a rejection with its row number. A body that is not CSV or NDJSON at all is a 400.
import { CsvError, parse } from 'csv-parse';
import type { z } from 'zod';
import { MAX_FREE_FORM_BYTES, MAX_FREE_FORM_DEPTH } from '../../contract/common.schemas.js';
import { invalidField, ProblemError } from '../../contract/problems.js';
import {
  CustomerImportRow,
  VoucherImportRow,
  type ImportFormat,
  type ImportKind,
  type ImportRejection,
  type RejectionCode,
} from './import.schemas.js';

/** What a row kind stages: its columns (after `line`), CSV cell readers and the COPY values of a checked row. */
interface RowKind<Row> {
  schema: z.ZodType<Row>;
  /** Staging columns, in COPY order (the row number `line` comes first). */
  columns: readonly string[];
  /** CSV columns that are fields as they are, with how a cell is read; `metadata.<key>` columns are strings. */
  cells: Readonly<Record<string, (cell: string) => unknown>>;
  required: string;
  /** COPY values of a checked row, or a rejection. */
  values(row: Row, defaults: RowDefaults): Array<string | null> | { code: RejectionCode; reason: string };
}

export interface RowDefaults {
  campaignId?: string | undefined;
}

const text = (cell: string) => cell;
const integer = (cell: string) => (/^-?\d+$/.test(cell) ? Number(cell) : cell);
const boolean = (cell: string) => (/^true$/i.test(cell) ? true : /^false$/i.test(cell) ? false : cell);
const json = (cell: string) => {
  try {
    return JSON.parse(cell) as unknown;
  } catch {
    return cell;
  }
};

// PostgreSQL text and jsonb hold no NUL and no unpaired surrogate. JSON.stringify writes a lone surrogate as an escape.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_JSON = /\\u0000|\\ud[89a-f]/i;

const copyText = (value: string) => (/[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : value);
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function depthOf(value: unknown, depth = 0): number {
  if (typeof value !== 'object' || value === null || depth > MAX_FREE_FORM_DEPTH) return depth;
  let deepest = depth + 1;
  for (const key in value) deepest = Math.max(deepest, depthOf((value as Record<string, unknown>)[key], depth + 1));
  return deepest;
}

/** Metadata as COPY text of its JSON, or why it cannot be stored. */
function metadataValue(metadata: Record<string, unknown> | undefined): string | null | { code: RejectionCode; reason: string } {
  if (metadata === undefined) return null;
  const jsonText = JSON.stringify(metadata);
  if (jsonText.length > MAX_FREE_FORM_BYTES) return { code: 'invalid_row', reason: `metadata: at most ${MAX_FREE_FORM_BYTES} bytes as JSON` };
  if (depthOf(metadata) > MAX_FREE_FORM_DEPTH) return { code: 'invalid_row', reason: `metadata: at most ${MAX_FREE_FORM_DEPTH} levels deep` };
  if (UNSTORABLE_JSON.test(jsonText)) return { code: 'invalid_row', reason: 'metadata: contains a NUL character or an unpaired surrogate' };
  return copyText(jsonText);
}

const str = (value: string | number | boolean | undefined | null) => (value === undefined || value === null ? null : String(value));

export const VOUCHER_ROWS: RowKind<VoucherImportRow> = {
  schema: VoucherImportRow,
  columns: ['code', 'campaign_id', 'active', 'start_date', 'expiration_date', 'redemption_limit', 'per_customer_limit', 'max_discount', 'gift_amount', 'metadata'],
  cells: {
    code: text,
    campaignId: text,
    active: boolean,
    startDate: text,
    expirationDate: text,
    redemptionLimit: integer,
    perCustomerLimit: integer,
    maxDiscount: integer,
    'gift.amount': integer,
    metadata: json,
  },
  required: 'code',
  values(row, defaults) {
    const campaignId = row.campaignId ?? defaults.campaignId;
    if (!campaignId) return { code: 'campaign_required', reason: 'no campaignId in the row, nor as the import’s campaignId' };
    const metadata = metadataValue(row.metadata);
    if (metadata !== null && typeof metadata === 'object') return metadata;
    return [
      row.code, campaignId, str(row.active), str(row.startDate), str(row.expirationDate), str(row.redemptionLimit),
      str(row.perCustomerLimit), str(row.maxDiscount), str(row.gift?.amount), metadata,
    ];
  },
};

export const CUSTOMER_ROWS: RowKind<CustomerImportRow> = {
  schema: CustomerImportRow,
  columns: ['source_id', 'email', 'name', 'metadata'],
  cells: { sourceId: text, email: text, name: text, metadata: json },
  required: 'sourceId',
  values(row) {
    for (const [field, value] of [['sourceId', row.sourceId], ['email', row.email], ['name', row.name]] as const) {
      if (value !== undefined && UNSTORABLE.test(value)) return { code: 'invalid_row', reason: `${field}: contains a NUL character or an unpaired surrogate` };
    }
    const metadata = metadataValue(row.metadata);
    if (metadata !== null && typeof metadata === 'object') return metadata;
    return [copyText(row.sourceId), str(row.email), str(row.name) === null ? null : copyText(row.name!), metadata];
  },
};

export const ROW_KINDS: Record<ImportKind, RowKind<never>> = { vouchers: VOUCHER_ROWS as RowKind<never>, customers: CUSTOMER_ROWS as RowKind<never> };

/** A row read: COPY text (one line, `line` first), or a rejection. */
export type ReadRow = { row: number; copy: string } | { row: number; rejection: ImportRejection };

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const dot = path.indexOf('.');
  if (dot === -1) {
    target[path] = value;
    return;
  }
  const head = path.slice(0, dot);
  const inner = (target[head] ??= {}) as Record<string, unknown>;
  if (typeof inner === 'object' && inner !== null) inner[path.slice(dot + 1)] = value;
}

function checkRow<Row>(kind: RowKind<Row>, row: number, fields: unknown, defaults: RowDefaults): ReadRow {
  const parsed = kind.schema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.join('.');
    return { row, rejection: { row, code: 'invalid_row', reason: at ? `${at}: ${issue.message}` : issue.message } };
  }
  const values = kind.values(parsed.data, defaults);
  if (!Array.isArray(values)) return { row, rejection: { row, ...values } };
  let line = String(row);
  for (const value of values) line += value === null ? '\t\\N' : '\t' + value;
  return { row, copy: line + '\n' };
}

/** Input quoted in a refusal, cut to `max` characters: an answer never echoes a whole body back. */
function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/** The CSV header's columns as field paths; unknown ones (or a missing required one) refuse the whole body. */
function headerPaths(kind: RowKind<unknown>, header: string[]): string[] {
  const unknown = header.filter((column) => !(column in kind.cells) && !/^metadata\.[^.]+$/.test(column));
  if (unknown.length) {
    const named = unknown.slice(0, 10).map((column) => clip(column, 40));
    throw invalidField('body', `unknown column(s) ${named.join(', ')}; columns: ${Object.keys(kind.cells).join(', ')}, metadata.<key>`);
  }
  if (!header.includes(kind.required)) throw invalidField('body', `the header has no ${kind.required} column`);
  if (new Set(header).size !== header.length) throw invalidField('body', 'the header names a column twice');
  return header;
}

/** UTF-8 text of the body, strictly: invalid bytes are a 400; a leading byte-order mark is dropped. */
async function* decodeUtf8(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of chunks) {
      const part = decoder.decode(chunk, { stream: true });
      if (part) yield part;
    }
    const rest = decoder.decode();
    if (rest) yield rest;
  } catch (error) {
    if (error instanceof TypeError && !(error instanceof ProblemError)) throw invalidField('body', 'the body is not valid UTF-8');
    throw error;
  }
}

/** Waits for room in the parser, or for its end: a parser destroyed (the reader refused the body) never drains. */
function drainedOrClosed(parser: NodeJS.WritableStream & { destroyed: boolean; off(event: string, listener: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      parser.off('drain', done);
      parser.off('close', done);
      resolve();
    };
    parser.once('drain', done);
    parser.once('close', done);
  });
}

async function* csvRows(kind: RowKind<unknown>, source: AsyncIterable<string>, defaults: RowDefaults): AsyncGenerator<ReadRow> {
  const parser = parse({ bom: true, skip_empty_lines: true, relax_column_count: true, trim: true });
  const feeding = (async () => {
    try {
      for await (const part of source) {
        if (!parser.write(part)) await drainedOrClosed(parser);
        if (parser.destroyed) return;
      }
      parser.end();
    } catch (error) {
      parser.destroy(error as Error);
    }
  })();
  let paths: string[] | undefined;
  let row = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!paths) {
        paths = headerPaths(kind, record);
        continue;
      }
      row++;
      if (record.length !== paths.length) {
        yield { row, rejection: { row, code: 'invalid_row', reason: `${record.length} cells for ${paths.length} columns` } };
        continue;
      }
      const fields: Record<string, unknown> = {};
      for (let i = 0; i < paths.length; i++) {
        const cell = record[i]!;
        if (cell === '') continue;
        const path = paths[i]!;
        setPath(fields, path, (kind.cells[path] ?? text)(cell));
      }
      yield checkRow(kind, row, fields, defaults);
    }
  } catch (error) {
    if (error instanceof ProblemError) throw error;
    if (error instanceof CsvError) throw invalidField('body', `not valid CSV: ${clip(error.message, 200)}`);
    throw error;
  } finally {
    parser.destroy();
    await feeding;
  }
}

const MAX_NDJSON_LINE = 1_048_576;

async function* ndjsonRows(kind: RowKind<unknown>, source: AsyncIterable<string>, defaults: RowDefaults): AsyncGenerator<ReadRow> {
  let pending = '';
  let line = 0;
  const rowOf = (textLine: string): ReadRow | undefined => {
    line++;
    if (textLine.trim() === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(textLine);
    } catch {
      return { row: line, rejection: { row: line, code: 'invalid_row', reason: 'not a JSON object' } };
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { row: line, rejection: { row: line, code: 'invalid_row', reason: 'not a JSON object' } };
    }
    return checkRow(kind, line, value, defaults);
  };
  for await (const part of source) {
    pending += part;
    let start = 0;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
      const read = rowOf(pending.slice(start, end));
      start = end + 1;
      if (read) yield read;
    }
    pending = pending.slice(start);
    if (pending.length > MAX_NDJSON_LINE) throw invalidField('body', `an NDJSON line is longer than ${MAX_NDJSON_LINE} characters`);
  }
  const last = rowOf(pending);
  if (last) yield last;
}

/** Every row of the body, in order: COPY text for the staging table or a rejection. */
export function readRows(kind: ImportKind, format: ImportFormat, chunks: AsyncIterable<Uint8Array>, defaults: RowDefaults): AsyncGenerator<ReadRow> {
  const rows = ROW_KINDS[kind] as RowKind<unknown>;
  const source = decodeUtf8(chunks);
  return format === 'csv' ? csvRows(rows, source, defaults) : ndjsonRows(rows, source, defaults);
}
