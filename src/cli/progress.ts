// Progress bars on a terminal (stderr), for import (by bytes of the file read) and export (rows so far).
import cliProgress from 'cli-progress';
import type { ImportProgress } from './bulk-import.js';

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
