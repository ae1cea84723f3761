// Progress bars on a terminal (stderr), for import (by bytes of the file read; a streamed import then by rows merged)
// and export (rows so far).
import cliProgress from 'cli-progress';
import type { ImportProgress, StreamedImportProgress } from './bulk-import.js';

export function csvProgress(stream: NodeJS.WriteStream, totalBytes: number | undefined): ImportProgress {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      // Fits 80 columns with a 7-digit row count, so the estimate at the end is never cut off.
      format: totalBytes
        ? 'import {bar} {percentage}% {rows} rows, {failed} failed, {eta_formatted} left'
        : 'import {rows} rows, {failed} failed',
      barsize: 20,
      hideCursor: true,
      etaBuffer: 200,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(totalBytes ?? 0, 0, { rows: 0, failed: 0 });
  return {
    update: (bytes, counts) => bar.update(totalBytes ? bytes : 0, counts),
    stop: () => bar.stop(),
  };
}

export function exportProgress(stream: NodeJS.WriteStream): { update: (rows: number) => void; stop: () => void } {
  const bar = new cliProgress.SingleBar({ stream, format: 'export {value} rows', hideCursor: true, fps: 5 });
  bar.start(0, 0);
  return { update: (rows) => bar.update(rows), stop: () => bar.stop() };
}

/** Upload share of a streamed import's bar (by bytes); the merge (by rows) fills the rest. */
const UPLOAD_SHARE = 0.3;

/**
 * A streamed import on a terminal: the upload by bytes of the file (when its size is known), then the job's merge
 * by rows checked; within 80 columns with 7-digit counts, so the estimate at the end is never cut off.
 */
export function streamedImportProgress(stream: NodeJS.WriteStream, totalBytes: number | undefined): StreamedImportProgress {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: '{stage} {bar} {percentage}% {rows} rows, {rejected} rejected, {eta_formatted} left',
      barsize: 20,
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  const total = 1000;
  bar.start(total, 0, { stage: 'upload', rows: 0, rejected: 0 });
  return {
    uploaded: (bytes) => {
      if (totalBytes) bar.update(Math.floor(total * UPLOAD_SHARE * Math.min(1, bytes / totalBytes)));
    },
    merged: (job) => {
      const { read, inserted, rejected } = job.counts;
      const done = FINISHED_STATUSES.has(job.status) ? 1 : read ? (inserted + rejected) / read : 0;
      bar.update(Math.floor(total * (UPLOAD_SHARE + (1 - UPLOAD_SHARE) * done)), { stage: 'merge ', rows: inserted + rejected, rejected });
    },
    stop: () => bar.stop(),
  };
}

const FINISHED_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED']);
