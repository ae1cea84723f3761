// Export of any list operation: pages are fetched one after another and streamed out as NDJSON or CSV,
// so the whole list never sits in memory.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { PromotionsClient } from '../client/index.js';
import type { Operation } from '../contract/operation.js';
import { listItemFields } from './operation-command.js';
import { csvField } from './output.js';

export type ExportFormat = 'ndjson' | 'csv';

export interface ExportOptions {
  client: PromotionsClient;
  operation: Operation;
  input: Record<string, unknown>;
  format: ExportFormat;
  out: Writable;
  onProgress?: (rows: number) => void;
}

async function write(out: Writable, chunk: string): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

export async function exportList(options: ExportOptions): Promise<{ operation: string; rows: number }> {
  let rows = 0;
  // A fixed header: every field of the list's item schema, so columns that only later rows hold are kept.
  const columns = listItemFields(options.operation);
  if (options.format === 'csv') await write(options.out, columns.map(csvField).join(',') + '\r\n');
  const pages = options.client.pages(options.operation.name, { limit: 100, ...options.input });
  for await (const page of pages as AsyncIterable<{ data: Array<Record<string, unknown>> }>) {
    let chunk = '';
    for (const item of page.data) {
      if (options.format === 'ndjson') chunk += JSON.stringify(item) + '\n';
      // Nested values are JSON in their cell.
      else chunk += columns.map((c) => csvField(item[c])).join(',') + '\r\n';
    }
    rows += page.data.length;
    if (chunk) await write(options.out, chunk);
    options.onProgress?.(rows);
  }
  return { operation: options.operation.name, rows };
}
