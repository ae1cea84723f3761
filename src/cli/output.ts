// What the CLI prints: JSON by default (scripts), a plain table with --pretty (people).
const MAX_CELL = 40;

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > MAX_CELL ? flat.slice(0, MAX_CELL - 1) + '…' : flat;
}

export function table(rows: Array<Record<string, unknown>>, columns?: string[]): string {
  const cols = columns ?? [...new Set(rows.flatMap((row) => Object.keys(row)))];
  if (!rows.length || !cols.length) return '(none)';
  const cells = rows.map((row) => cols.map((c) => cell(row[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(cols), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

function isListPage(value: unknown): value is { data: Array<Record<string, unknown>>; next?: string; prev?: string } {
  return typeof value === 'object' && value !== null && Array.isArray((value as { data?: unknown }).data);
}

export function formatResult(result: unknown, pretty: boolean): string {
  if (result === undefined) return pretty ? 'done' : '';
  if (!pretty) return JSON.stringify(result, null, 2);
  if (isListPage(result)) {
    const footer = [result.next ? `next: --cursor ${result.next}` : '', result.prev ? `prev: --cursor ${result.prev}` : ''].filter(Boolean);
    return [table(result.data), ...footer].join('\n');
  }
  if (typeof result === 'object' && result !== null && !Array.isArray(result)) {
    return table(Object.entries(result).map(([field, value]) => ({ field, value })), ['field', 'value']);
  }
  return JSON.stringify(result, null, 2);
}

/** One CSV field per RFC 4180: quoted when it holds a comma, quote or line break; objects as JSON. */
export function csvField(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
