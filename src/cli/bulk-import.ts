// CSV import: streams rows into any create-like operation with bounded concurrency; columns are field names
// (dots for nesting), cells are read as the field's type. A failed row is reported and the rest go on. A bulk operation
// with a streamed body (vouchers.import) gets the file as it is, and its import job is followed until done.
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { ApiError, type PromotionsClient } from '../client/index.js';
import type { Operation } from '../contract/operation.js';
import { inputSchemaOf, setField, UsageError } from './operation-command.js';

export interface ImportProgress {
  update(bytes: number, counts: { rows: number; failed: number }): void;
  stop(): void;
}

export interface ImportOptions {
  client: PromotionsClient;
  operation: Operation;
  source: Readable;
  /** Fields every row gets (e.g. campaignId), as `field=value` text, unless the row has its own. */
  fixed: ReadonlyArray<[string, string]>;
  /** Rows per request: an RPC batch of single calls, or one call of a bulk operation. */
  batchSize: number;
  /** Requests in flight. */
  concurrency: number;
  progress?: ImportProgress | undefined;
}

export interface RowFailure {
  line: number;
  code: string;
  detail?: string | undefined;
  errors?: Array<{ path: string; message: string }> | undefined;
}

export interface ImportReport {
  operation: string;
  rows: number;
  imported: number;
  failed: number;
  seconds: number;
  /** The first failures (at most 100). */
  failures: RowFailure[];
  /** Set when the import stopped early (no key, no scope, version mismatch, service unreachable). */
  stopped?: string;
}

const MAX_REPORTED = 100;
/** Problems that every following row would meet as well: stop instead of failing them one by one. */
const FATAL_CODES: ReadonlySet<string> = new Set(['unauthorized', 'forbidden', 'version_mismatch']);

const camel = (name: string) => name.replace(/-([a-z])/g, (_, ch: string) => ch.toUpperCase());

type JsonProperties = Record<string, { type?: unknown; items?: { type?: unknown; properties?: Record<string, unknown> } }>;

/**
 * A bulk operation takes the rows themselves: its input has exactly one field, an array of objects (e.g.
 * `vouchers.import { items: [...] }`). Any other operation is called once per row.
 */
export function bulkFieldOf(operation: Operation): string | undefined {
  const properties = (inputSchemaOf(operation).properties ?? {}) as JsonProperties;
  const names = Object.keys(properties);
  const only = names.length === 1 ? properties[names[0]!]! : undefined;
  return only?.type === 'array' && only.items?.type === 'object' ? names[0] : undefined;
}

function rowSchemaOf(operation: Operation, bulkField: string | undefined) {
  const root = inputSchemaOf(operation);
  if (!bulkField) return root;
  // The items' schema, still able to follow the root's references.
  return { ...(((root.properties ?? {}) as JsonProperties)[bulkField]!.items as typeof root), $defs: root.$defs };
}

function checkColumns(operation: Operation, bulkField: string | undefined, columns: string[]): void {
  const known = new Set(Object.keys(rowSchemaOf(operation, bulkField).properties ?? {}));
  const unknown = columns.filter((c) => !known.has(camel(c.split('.')[0]!)));
  if (unknown.length) {
    throw new UsageError(`${operation.name} has no field for the column(s) ${unknown.join(', ')}; fields: ${[...known].join(', ')}`);
  }
}

interface Row {
  line: number;
  input: Record<string, unknown>;
}

export async function importCsv(options: ImportOptions): Promise<ImportReport> {
  const started = performance.now();
  const { operation, client } = options;
  const bulkField = bulkFieldOf(operation);
  const rowSchema = rowSchemaOf(operation, bulkField);
  const report: ImportReport = { operation: operation.name, rows: 0, imported: 0, failed: 0, seconds: 0, failures: [] };
  const parser = options.source.pipe(
    parse({ columns: (header: string[]) => (checkColumns(operation, bulkField, header), header), bom: true, trim: true, skip_empty_lines: true, info: true }),
  );
  const fixed: Record<string, unknown> = {};
  for (const [field, value] of options.fixed) setField(fixed, rowSchema, field, value);
  const inFlight = new Set<Promise<void>>();
  let fatal: unknown;
  let bytesRead = 0;

  const fail = (line: number, error: unknown) => {
    report.failed++;
    if (error instanceof ApiError && FATAL_CODES.has(error.code)) fatal ??= error;
    else if (!(error instanceof ApiError) && !(error instanceof UsageError)) fatal ??= error;
    if (report.failures.length < MAX_REPORTED) {
      report.failures.push(
        error instanceof ApiError
          ? { line, code: error.code, detail: error.detail, ...(error.errors.length ? { errors: error.errors } : {}) }
          : { line, code: error instanceof UsageError ? 'invalid_cell' : 'failed', detail: (error as Error).message },
      );
    }
  };

  const send = async (rows: Row[]) => {
    try {
      if (bulkField) {
        await client.call(operation.name, { [bulkField]: rows.map((r) => r.input) });
        report.imported += rows.length;
      } else {
        const outcomes = await client.batch(rows.map((r) => ({ operation: operation.name, input: r.input })));
        outcomes.forEach((outcome, i) => (outcome.ok ? report.imported++ : fail(rows[i]!.line, outcome.error)));
      }
    } catch (error) {
      for (const row of rows) fail(row.line, error);
    }
    options.progress?.update(bytesRead, { rows: report.imported + report.failed, failed: report.failed });
  };

  const dispatch = async (rows: Row[]) => {
    const request: Promise<void> = send(rows).finally(() => inFlight.delete(request));
    inFlight.add(request);
    if (inFlight.size >= options.concurrency) await Promise.race(inFlight);
  };

  let pending: Row[] = [];
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number; bytes: number } }>) {
      if (fatal) break;
      report.rows++;
      bytesRead = info.bytes;
      try {
        const input: Record<string, unknown> = structuredClone(fixed);
        for (const [column, value] of Object.entries(record)) if (value !== '') setField(input, rowSchema, column, value);
        pending.push({ line: info.lines, input });
      } catch (error) {
        fail(info.lines, error);
      }
      if (pending.length >= options.batchSize) {
        const rows = pending;
        pending = [];
        await dispatch(rows);
      }
    }
    if (pending.length && !fatal) await dispatch(pending);
  } finally {
    await Promise.all(inFlight);
    options.source.destroy();
    options.progress?.stop();
  }
  if (fatal) report.stopped = fatal instanceof Error ? fatal.message : String(fatal);
  report.seconds = Math.round((performance.now() - started) / 10) / 100;
  return report;
}

// --- bulk operations with a streamed body (vouchers.import, customers.import) -------------------------------------

/** Progress of a streamed import: the upload by bytes, then the job's merge by rows. */
export interface StreamedImportProgress {
  uploaded(bytes: number): void;
  merged(job: ImportJob): void;
  stop(): void;
}

/** What the CLI reads of an import job (GET /imports/{id}). */
export interface ImportJob {
  id: string;
  status: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  counts: { read: number; inserted: number; rejected: number };
  rejections: Array<{ row: number; code: string; reason: string }>;
  error: string | null;
  [field: string]: unknown;
}

export interface StreamedImportOptions {
  client: PromotionsClient;
  /** Where the body goes: the service and the key (the same the client uses). */
  baseUrl: string;
  apiKey: string;
  operation: Operation;
  source: Readable;
  format: 'csv' | 'ndjson';
  /** Query fields given with --set (e.g. campaignId). */
  fixed: ReadonlyArray<[string, string]>;
  progress?: StreamedImportProgress | undefined;
  pollMs?: number;
}

const MEDIA_TYPES = { csv: 'text/csv', ndjson: 'application/x-ndjson' } as const;
const FINISHED: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED']);

/** A streamed bulk operation takes its rows as the request body instead of JSON (the registry's `bodyStream`). */
export function isStreamedImport(operation: Operation): boolean {
  return operation.bodyStream !== undefined;
}

/** `--set` of a streamed import sets query fields only (the body is the file). */
function queryOf(operation: Operation, fixed: ReadonlyArray<[string, string]>): URLSearchParams {
  const allowed = Object.keys(operation.query?.shape ?? {});
  const query = new URLSearchParams();
  for (const [field, value] of fixed) {
    const name = camel(field);
    if (!allowed.includes(name)) throw new UsageError(`${operation.name} takes --set only for ${allowed.join(', ') || 'nothing'}; the rest comes from the file's columns`);
    query.set(name, value);
  }
  return query;
}

async function* counted(source: Readable, onBytes: (bytes: number) => void): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    onBytes(bytes);
    yield chunk;
  }
}

function webStream(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/** Streams the file to the operation's route, then follows the import job until it has finished. */
export async function importStreamed(options: StreamedImportOptions): Promise<ImportJob & { operation: string; seconds: number }> {
  const started = performance.now();
  const { operation, progress } = options;
  const query = queryOf(operation, options.fixed).toString();
  const url = `${options.baseUrl.replace(/\/+$/, '')}/api/v1${operation.path}${query ? `?${query}` : ''}`;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': MEDIA_TYPES[options.format], accept: 'application/json' },
      body: webStream(counted(options.source, (bytes) => progress?.uploaded(bytes))),
      duplex: 'half',
    } as RequestInit);
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const problem = (body ?? { status: res.status, code: 'http_error', detail: text.slice(0, 500) }) as { status: number; code: string };
      throw new ApiError(operation.name, { ...problem, status: res.status }, { requestId: res.headers.get('x-request-id') ?? undefined });
    }
    let job = body as ImportJob;
    while (!FINISHED.has(job.status)) {
      progress?.merged(job);
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
      job = (await options.client.call('imports.get', { id: job.id })) as ImportJob;
    }
    progress?.merged(job);
    return { operation: operation.name, ...job, seconds: Math.round((performance.now() - started) / 10) / 100 };
  } finally {
    options.source.destroy();
    progress?.stop();
  }
}
