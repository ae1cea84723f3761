// Keyset pagination on (created_at, id), newest first, shared by every list. Fragments passed in are trusted
// SQL written in *.queries.ts (table, columns, filters with $n placeholders); client values only travel as parameters.
import type { CursorCodec, CursorDirection } from './cursor.js';
import type { Row, Sql } from './database.js';

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export interface Page<T> {
  data: T[];
  next?: string;
  prev?: string;
}

export interface KeysetQuery<R extends Row, T> {
  /** Names the list; a cursor issued for one list is refused by another. */
  list: string;
  from: string;
  columns: string;
  where: string[];
  params: unknown[];
  map: (row: R) => T;
}

type Position = { createdAtMicros: number; id: string };
type KeyedRow = Row & { cursor_micros: number; id: string };

export async function keysetPage<R extends Row, T>(
  db: Sql,
  codec: CursorCodec,
  query: KeysetQuery<R, T>,
  request: PageRequest,
): Promise<Page<T>> {
  const at = request.cursor ? codec.decode(request.cursor, query.list) : undefined;
  const direction: CursorDirection = at?.direction ?? 'next';
  const rows = await fetchRows(db, query, direction, at, request.limit + 1);
  const hasMore = rows.length > request.limit;
  const page = rows.slice(0, request.limit);
  if (direction === 'prev') page.reverse();

  const first = page[0];
  const last = page[page.length - 1];
  const encode = (dir: CursorDirection, row: KeyedRow) =>
    codec.encode({ list: query.list, direction: dir, createdAtMicros: row.cursor_micros, id: row.id });

  const result: Page<T> = { data: page.map((row) => query.map(row as unknown as R)) };
  if (direction === 'next') {
    if (hasMore && last) result.next = encode('next', last);
    if (at && (await exists(db, query, 'prev', first ? keyOf(first) : at))) {
      result.prev = first ? encode('prev', first) : codec.encode({ ...at, direction: 'prev', list: query.list });
    }
  } else {
    if (hasMore && first) result.prev = encode('prev', first);
    if (at && (await exists(db, query, 'next', last ? keyOf(last) : at))) {
      result.next = last ? encode('next', last) : codec.encode({ ...at, direction: 'next', list: query.list });
    }
  }
  return result;
}

function keyOf(row: KeyedRow): Position {
  return { createdAtMicros: row.cursor_micros, id: row.id };
}

function positionFilter(direction: CursorDirection, firstParam: number): string {
  const op = direction === 'next' ? '<' : '>';
  return `(created_at, id) ${op} (timestamptz 'epoch' + $${firstParam}::int8 * interval '1 microsecond', $${firstParam + 1}::uuid)`;
}

async function fetchRows<R extends Row, T>(
  db: Sql,
  query: KeysetQuery<R, T>,
  direction: CursorDirection,
  at: Position | undefined,
  limit: number,
): Promise<KeyedRow[]> {
  const where = [...query.where];
  const params = [...query.params];
  if (at) {
    where.push(positionFilter(direction, params.length + 1));
    params.push(at.createdAtMicros, at.id);
  }
  params.push(limit);
  const order = direction === 'next' ? 'DESC' : 'ASC';
  const sql = `SELECT ${query.columns}, (extract(epoch FROM created_at) * 1000000)::int8 AS cursor_micros
    FROM ${query.from} ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
    ORDER BY created_at ${order}, id ${order} LIMIT $${params.length}`;
  return (await db.query<KeyedRow>(sql, params)).rows;
}

async function exists<R extends Row, T>(
  db: Sql,
  query: KeysetQuery<R, T>,
  direction: CursorDirection,
  from: Position,
): Promise<boolean> {
  const params = [...query.params, from.createdAtMicros, from.id];
  const where = [...query.where, positionFilter(direction, query.params.length + 1)];
  const { rowCount } = await db.query(`SELECT 1 FROM ${query.from} WHERE ${where.join(' AND ')} LIMIT 1`, params);
  return (rowCount ?? 0) > 0;
}
