// What the CLI prints: JSON by default (scripts), a plain table with --pretty (people), fitted to the terminal.
const MAX_CELL = 40;
const MIN_COLUMN = 4;
const GAP = '  ';

/** The fields a --pretty list shows by default, in this order, when an item has them (at most DEFAULT_COUNT). */
const PREFERRED_COLUMNS = [
  'id', 'code', 'name', 'email', 'sourceId', 'type', 'status', 'active', 'ok', 'voucherCode', 'operation',
  'amount', 'currency', 'balance', 'points', 'redeemedCount', 'createdAt',
];
const DEFAULT_COUNT = 6;

export interface TableOptions {
  /** The columns to show (`--columns a,b,c`); default: a few chosen per resource. */
  columns?: string[] | undefined;
  /** The line width to fit (the terminal's); default 80. */
  width?: number | undefined;
}

/** The width to fit: COLUMNS (set by shells and by tests), else the terminal's, else 80. */
export function outputWidth(env: NodeJS.ProcessEnv, stream: { columns?: number | undefined }): number {
  const fromEnv = Number(env['COLUMNS']);
  if (Number.isInteger(fromEnv) && fromEnv >= 20) return fromEnv;
  return stream.columns && stream.columns >= 20 ? stream.columns : 80;
}

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  const raw = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return raw.replace(/\s+/g, ' ');
}

function clip(value: string, width: number): string {
  return value.length > width ? value.slice(0, Math.max(0, width - 1)) + '…' : value;
}

/** A few telling columns of the rows: the preferred fields they have, else their first fields. */
export function defaultColumns(rows: Array<Record<string, unknown>>): string[] {
  const present = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const preferred = PREFERRED_COLUMNS.filter((c) => present.includes(c));
  return (preferred.length ? preferred : present).slice(0, DEFAULT_COUNT);
}

/** Column widths that fit `width`: default columns are left out from the right first (values stay whole; the
 *  caller can ask for others with --columns), then the widest gives way down to MIN_COLUMN. Columns asked for
 *  are all kept. */
function fitWidths(natural: number[], width: number, keepAll: boolean): number[] {
  const widths = [...natural];
  const total = () => widths.reduce((sum, w) => sum + w, 0) + GAP.length * (widths.length - 1);
  while (!keepAll && total() > width && widths.length > 2) widths.pop();
  while (total() > width) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest]! <= MIN_COLUMN) break;
    widths[widest]! -= 1;
  }
  return widths;
}

export function table(rows: Array<Record<string, unknown>>, options: TableOptions = {}): string {
  const wanted = options.columns?.length ? options.columns : defaultColumns(rows);
  if (!rows.length || !wanted.length) return '(none)';
  const cells = rows.map((row) => wanted.map((c) => clip(text(row[c]), MAX_CELL)));
  const natural = wanted.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const widths = fitWidths(natural, options.width ?? 80, Boolean(options.columns?.length));
  const line = (values: string[]) => widths.map((w, i) => clip(values[i]!, w).padEnd(w)).join(GAP).trimEnd();
  return [line(wanted), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

function isListPage(value: unknown): value is { data: Array<Record<string, unknown>>; next?: string; prev?: string } {
  return typeof value === 'object' && value !== null && Array.isArray((value as { data?: unknown }).data);
}

export function formatResult(result: unknown, pretty: boolean, options: TableOptions = {}): string {
  if (result === undefined) return pretty ? 'done' : '';
  if (!pretty) return JSON.stringify(result, null, 2);
  const width = options.width ?? 80;
  if (isListPage(result)) {
    const footer = [result.next ? `next: --cursor ${result.next}` : '', result.prev ? `prev: --cursor ${result.prev}` : ''].filter(Boolean);
    return [table(result.data, options), ...footer.map((f) => clip(f, width))].join('\n');
  }
  if (typeof result === 'object' && result !== null && !Array.isArray(result)) {
    const entries = Object.entries(result).filter(([field]) => !options.columns?.length || options.columns.includes(field));
    const fieldWidth = Math.max(5, ...entries.map(([field]) => field.length));
    // One field per line; the value takes the rest of the line.
    const valueWidth = Math.max(MIN_COLUMN, width - fieldWidth - GAP.length);
    return table(entries.map(([field, value]) => ({ field, value: clip(text(value), valueWidth) })), { columns: ['field', 'value'], width });
  }
  return JSON.stringify(result, null, 2);
}

/** Wraps a line at `width` columns (at spaces past `indent`, so padding before it stays); continuation lines
 *  start with `indent` spaces. A word longer than the line stays whole. */
export function wrap(line: string, indent: number, width = 80): string {
  const lines: string[] = [];
  let rest = line;
  while (rest.length > width) {
    const cut = rest.lastIndexOf(' ', width);
    if (cut <= indent) break;
    lines.push(rest.slice(0, cut).trimEnd());
    rest = ' '.repeat(indent) + rest.slice(cut + 1).trimStart();
  }
  lines.push(rest);
  return lines.join('\n');
}

/** One CSV field per RFC 4180: quoted when it holds a comma, quote or line break; objects as JSON. */
export function csvField(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
