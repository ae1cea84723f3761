// Bulk import use cases. accept: the body streamed, each row checked in TypeScript and COPY'd into the session's
// staging table; then the import recorded (with its one audit entry). run (in the background, on the same session):
// set checks in SQL (taken codes, repeats within the file, campaigns), then merges in batches so locks stay short.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import type { Actor } from '../../contract/actor.js';
import type { ServiceDeps, UnitOfWork } from '../../contract/handler.js';
import { StreamedBody } from '../../contract/operation.js';
import { invalidField, ProblemError } from '../../contract/problems.js';
import { withTransaction, type Sql } from '../../platform/database.js';
import type { Logger } from '../../platform/logger.js';
import { findCampaign } from '../campaigns/index.js';
import { customerCreatedPayload } from '../customers/index.js';
import { recordEvent, recordEvents } from '../events/index.js';
import { refreshCustomersSegments } from '../segments/index.js';
import { applyVoucherTemplate } from '../../checkout/voucher-template.rules.js';
import { findDefaultCurrency } from '../workspaces/index.js';
import type { VoucherFields } from '../../checkout/voucher-template.rules.js';
import { readRows, ROW_KINDS } from './import-rows.js';
import {
  addImportRejections,
  analyzeTable,
  copyIntoStaging,
  countRejections,
  createStaging,
  dropOrphanedStaging,
  dropStaging,
  finishImport,
  firstRejections,
  indexStaging,
  insertImport,
  lockStaging,
  markImportRunning,
  mergeCustomerBatch,
  mergeVoucherBatch,
  rejectRowsByCampaign,
  rejectTakenCodes,
  stagedCampaignIds,
  stagedLineRange,
  stageTemplates,
  stagingTables,
  unlockStaging,
  type Staging,
} from './import.queries.js';
import { MAX_REPORTED_REJECTIONS, type Import, type ImportFormat, type ImportKind, type ImportRejection } from './import.schemas.js';

/** Rows per merge statement: big enough for throughput, small enough that each statement's locks are short. */
export const MERGE_BATCH_ROWS: Record<ImportKind, number> = { vouchers: 50_000, customers: 5_000 };
/**
 * Sessions merging voucher batches at once: the staged rows are free of repeats by then, so they never meet on a code;
 * PostgreSQL then uses both cores of a small machine (one statement runs on one). Customers merge in one session.
 */
const VOUCHER_MERGE_SESSIONS = 2;
/** Sorts of a whole file's codes (repeats within it) and of a batch stay in memory. */
const MERGE_WORK_MEM = '128MB';
/** COPY text is written in chunks of about this many characters. */
const COPY_CHUNK = 256 * 1024;
/** Why a COPY is abandoned, as sent to PostgreSQL: fixed and short, never the refused input. */
const COPY_ABANDONED = 'import body refused';

export interface ImportRequest {
  kind: ImportKind;
  rows: string | StreamedBody;
  format?: ImportFormat | undefined;
  campaignId?: string | undefined;
}

const FORMAT_OF_MEDIA_TYPE: Record<string, ImportFormat> = { 'text/csv': 'csv', 'application/x-ndjson': 'ndjson' };

function bodyOf(request: ImportRequest): { format: ImportFormat; chunks: AsyncIterable<Uint8Array> } {
  if (request.rows instanceof StreamedBody) {
    return { format: FORMAT_OF_MEDIA_TYPE[request.rows.mediaType] ?? 'csv', chunks: request.rows.chunks() };
  }
  return { format: request.format ?? 'csv', chunks: Readable.from([Buffer.from(request.rows)]) };
}

interface Staged {
  rowsRead: number;
  rejected: number;
  /** The first rejections found while reading (in row order). */
  rejections: ImportRejection[];
}

/** Reads the body row by row into import_rows by COPY; the rows refused on the way are counted and the first kept. */
async function stageBody(client: pg.PoolClient, s: Staging, request: ImportRequest): Promise<Staged & { format: ImportFormat }> {
  const { format, chunks } = bodyOf(request);
  await createStaging(client, s, request.kind);
  const copy = copyIntoStaging(client, s, ROW_KINDS[request.kind].columns);
  // A COPY whose session is lost fails (its connection gone): nothing more may be written to it.
  let failed: Error | undefined;
  copy.on('error', (error: Error) => (failed ??= error));
  const copied = finished(copy);
  copied.catch(() => undefined);
  const staged: Staged = { rowsRead: 0, rejected: 0, rejections: [] };
  let buffer = '';
  const flush = async () => {
    if (failed) throw failed;
    if (!copy.write(buffer)) await Promise.race([new Promise((resolve) => copy.once('drain', resolve)), copied]);
    buffer = '';
  };
  try {
    for await (const read of readRows(request.kind, format, chunks, { campaignId: request.campaignId })) {
      staged.rowsRead++;
      if ('copy' in read) {
        buffer += read.copy;
        if (buffer.length >= COPY_CHUNK) await flush();
      } else {
        staged.rejected++;
        if (staged.rejections.length < MAX_REPORTED_REJECTIONS) staged.rejections.push(read.rejection);
      }
    }
    if (buffer) await flush();
    if (failed) throw failed;
    copy.end();
    await copied;
  } catch (error) {
    if (failed) throw failed;
    // The CopyFail message says nothing of the input: PostgreSQL ends the session on one past 10,000 bytes.
    copy.destroy(new Error(COPY_ABANDONED));
    await copied.catch(() => undefined);
    throw error;
  }
  return { ...staged, format };
}

const IMPORT_RESOURCE = 'import';

/** What of the operation's handler context an import uses. */
export interface ImportContext {
  deps: ServiceDeps;
  actor: Actor;
  log: Logger;
  mutate<T>(work: (unit: UnitOfWork) => Promise<T>): Promise<T>;
}

/** How long an import waits for one of the process's import slots (ServiceDeps.importSlots) before a 503 says retry. */
const IMPORT_SLOT_WAIT_MS = 30_000;

/**
 * The operation: stages the body, records the import (PENDING) with its audit entry, answers it, and goes on merging
 * in the background on the same session (the staging tables are that session's).
 */
export async function acceptImport(ctx: ImportContext, request: ImportRequest, onMerged: () => Promise<void>): Promise<Import> {
  const { deps, actor, log } = ctx;
  const release = await deps.importSlots.take(IMPORT_SLOT_WAIT_MS);
  if (!release) {
    throw new ProblemError('service_unavailable', `this process runs ${deps.importSlots.size} imports at once and they are all running; retry shortly`, {
      headers: { 'Retry-After': '5' },
    });
  }
  const client = await deps.db.connect().catch((error: unknown) => {
    release();
    throw error;
  });
  const s = stagingTables(randomUUID().replaceAll('-', ''));
  let job: Import;
  try {
    await lockStaging(client, s);
    await dropOrphanedStaging(client);
    const started = performance.now();
    const staged = await stageBody(client, s, request);
    log.info({ kind: request.kind, rows: staged.rowsRead, ms: Math.round(performance.now() - started) }, 'import staged');
    if (staged.rowsRead === 0) throw invalidField('body', 'the body holds no rows');
    job = await ctx.mutate(async ({ tx, record }) => {
      const created = await insertImport(tx, actor.workspaceId, {
        kind: request.kind,
        format: staged.format,
        campaignId: request.campaignId ?? null,
        rowsRead: staged.rowsRead,
        rowsRejected: staged.rejected,
        rejections: staged.rejections,
      });
      const { rejections: _, ...summary } = created;
      record({ resourceType: IMPORT_RESOURCE, resourceId: created.id, after: summary });
      return created;
    });
  } catch (error) {
    await releaseSession(client, s);
    release();
    throw error;
  }
  void runImport({ client, s, deps, log, workspaceId: actor.workspaceId, job, readRejections: job.rejections, onMerged, release });
  return job;
}

/** Drops the staging tables and hands the session back; a session that cannot even do that is closed instead. */
async function releaseSession(client: pg.PoolClient, s: Staging): Promise<void> {
  const dropped = await dropStaging(client, s)
    .then(() => unlockStaging(client, s))
    .then(() => true, () => false);
  client.release(dropped ? undefined : true);
}

interface Run {
  client: pg.PoolClient;
  s: Staging;
  deps: ServiceDeps;
  log: Logger;
  workspaceId: string;
  job: Import;
  readRejections: ImportRejection[];
  onMerged: () => Promise<void>;
  /** Gives the import's slot back (ServiceDeps.importSlots). */
  release: () => void;
}

function mergedRejections(read: ImportRejection[], checked: ImportRejection[]): ImportRejection[] {
  return [...read, ...checked].sort((a, b) => a.row - b.row).slice(0, MAX_REPORTED_REJECTIONS);
}

async function runImport(run: Run): Promise<void> {
  const { client, s, workspaceId, job } = run;
  let told = false;
  try {
    const started = performance.now();
    await markImportRunning(client, workspaceId, job.id);
    await client.query(`SET work_mem = '${MERGE_WORK_MEM}'`);
    await indexStaging(client, s, job.kind === 'vouchers' ? 'code' : 'source_id');
    await rejectTakenCodes(client, s, workspaceId, job.kind);
    if (job.kind === 'vouchers') await checkCampaigns(client, s, workspaceId);
    await addImportRejections(client, workspaceId, job.id, await countRejections(client, s), mergedRejections(run.readRejections, await firstRejections(client, s)));
    const checkedMs = Math.round(performance.now() - started);
    await mergeAll(run);
    // The engine learns of the new codes before the job says SUCCEEDED: a client that sees it done can redeem them.
    await run.onMerged().catch(() => undefined);
    told = true;
    const finishedJob = await withTransaction(run.deps.db, async (tx) => {
      const done = await finishImport(tx, workspaceId, job.id, { status: 'SUCCEEDED', rejections: mergedRejections(run.readRejections, await firstRejections(client, s)) });
      await recordEvent(tx, workspaceId, 'import.succeeded', eventPayload(done ?? job));
      return done;
    });
    const ms = { checked: checkedMs, merged: Math.round(performance.now() - started) - checkedMs };
    run.log.info({ importId: job.id, counts: finishedJob?.counts, ms }, 'import finished');
  } catch (error) {
    run.log.warn({ err: (error as Error).message, importId: job.id }, 'import failed');
    await failImport(run, error).catch(() => undefined);
  } finally {
    await client.query('RESET work_mem').catch(() => undefined);
    await releaseSession(client, s);
    run.release();
    // Also after a failure: the batches merged before it are there.
    if (!told) await run.onMerged().catch(() => undefined);
  }
}

function eventPayload(job: Import): Record<string, unknown> {
  return { importId: job.id, kind: job.kind, counts: job.counts, ...(job.error ? { error: job.error } : {}) };
}

async function failImport(run: Run, error: unknown): Promise<void> {
  const reason = error instanceof ProblemError ? error.message : 'the import stopped on a database error; rows merged before stay';
  const rejections = await firstRejections(run.client, run.s).then((checked) => mergedRejections(run.readRejections, checked), () => undefined);
  await withTransaction(run.deps.db, async (tx) => {
    const failed = await finishImport(tx, run.workspaceId, run.job.id, { status: 'FAILED', error: reason, rejections });
    await recordEvent(tx, run.workspaceId, 'import.failed', eventPayload(failed ?? run.job));
  });
}

/** Each campaign the rows name, through its template: importable (its fields staged) or refused with a reason. */
async function checkCampaigns(client: Sql, s: Staging, workspaceId: string): Promise<void> {
  const templates: Array<{ campaignId: string; fields: VoucherFields }> = [];
  const refused: Array<{ campaignId: string; reason: string }> = [];
  const defaultCurrency = await findDefaultCurrency(client, workspaceId);
  for (const campaignId of await stagedCampaignIds(client, s, workspaceId)) {
    const campaign = await findCampaign(client, workspaceId, campaignId);
    if (!campaign) continue;
    const result = applyVoucherTemplate({}, campaign, { defaultCurrency, path: 'campaign.voucher' });
    if (!result.ok) refused.push({ campaignId, reason: `the campaign's voucher template makes no voucher: ${result.errors.map((e) => e.message).join('; ')}` });
    else if (result.fields.type === 'LOYALTY_CARD') refused.push({ campaignId, reason: 'loyalty cards are made by joining the program, not by import' });
    else templates.push({ campaignId, fields: result.fields });
  }
  await stageTemplates(client, s, templates);
  await rejectRowsByCampaign(client, s, refused);
}

async function mergeAll(run: Run): Promise<void> {
  const { client, s, workspaceId, job } = run;
  const range = await stagedLineRange(client, s);
  if (!range) return;
  const size = MERGE_BATCH_ROWS[job.kind];
  const batches: Array<[number, number]> = [];
  for (let from = range.first; from <= range.last; from += size) batches.push([from, from + size - 1]);
  if (job.kind === 'vouchers') {
    await mergeVouchersInSessions(run, batches);
  } else {
    for (const [from, to] of batches) await retryDeadlocks(() => mergeCustomers(client, s, workspaceId, job.id, from, to));
  }
  await analyzeTable(run.deps.db, job.kind).catch(() => undefined);
}

/** The import's own session and helpers from the pool take the next batch in turn until none is left. */
async function mergeVouchersInSessions(run: Run, batches: Array<[number, number]>): Promise<void> {
  const { s, workspaceId, job } = run;
  let next = 0;
  let failed = false;
  const work = async (session: Sql) => {
    while (!failed && next < batches.length) {
      const [from, to] = batches[next++]!;
      try {
        await retryDeadlocks(() => mergeVoucherBatch(session, s, workspaceId, job.id, from, to));
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const helpers = batches.length > 1 ? VOUCHER_MERGE_SESSIONS - 1 : 0;
  const sessions = [work(run.client)];
  for (let i = 0; i < helpers; i++) {
    sessions.push(
      (async () => {
        const helper = await run.deps.db.connect();
        try {
          await helper.query(`SET work_mem = '${MERGE_WORK_MEM}'`);
          await work(helper);
        } finally {
          await helper.query('RESET work_mem').catch(() => undefined);
          helper.release();
        }
      })(),
    );
  }
  const outcomes = await Promise.allSettled(sessions);
  const failure = outcomes.find((o) => o.status === 'rejected');
  if (failure) throw (failure as PromiseRejectedResult).reason;
}

/** A batch of customers, their customer.created events and AUTO segment memberships, in one transaction. */
async function mergeCustomers(client: pg.PoolClient, s: Staging, workspaceId: string, importId: string, from: number, to: number): Promise<void> {
  await client.query('BEGIN');
  try {
    const merged = await mergeCustomerBatch(client, s, workspaceId, importId, from, to);
    await recordEvents(
      client,
      merged.customers.map((c) => ({
        workspaceId,
        type: 'customer.created' as const,
        payload: customerCreatedPayload(c),
      })),
    );
    await refreshCustomersSegments(client, workspaceId, merged.customers.map((c) => ({ ...c, segments: [] })));
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

const DEADLOCK = '40P01';

/** Another bulk insert meeting ours on codes in another order (a generation draws at random) may deadlock: try again. */
async function retryDeadlocks<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 3 || (error as { code?: unknown }).code !== DEADLOCK) throw error;
    }
  }
}
