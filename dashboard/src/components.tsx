// Pieces every page uses: a paged list over a list operation (cursors, empty state, errors), notes, dates.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from './api.js';

export function formatTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return date.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="note note-error" role="alert">
      {messageOf(error)}
    </p>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <h1>{title}</h1>
      <div class="page-actions">{children}</div>
    </header>
  );
}

export interface Column<T> {
  label: string;
  render: (item: T) => ComponentChildren;
  class?: string;
}

interface Page<T> {
  data: T[];
  next?: string;
  prev?: string;
}

/** A table over a list operation: `load(cursor)` fetches a page; `version` bumps reload it from the start. */
export function PagedTable<T extends { id?: string }>(props: {
  load: (cursor: string | undefined) => Promise<Page<T>>;
  columns: Column<T>[];
  empty: string;
  version?: unknown;
  label: string;
}) {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [page, setPage] = useState<Page<T> | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);

  useEffect(() => setCursor(undefined), [props.version]);
  useEffect(() => {
    let live = true;
    setLoading(true);
    props
      .load(cursor)
      .then((loaded) => live && (setPage(loaded), setError(undefined)))
      .catch((e: unknown) => live && setError(e))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [cursor, props.version, props.load]);

  if (error) return <ErrorNote error={error} />;
  if (!page) return <p class="muted">Loading…</p>;
  return (
    <div class={loading ? 'table-wrap loading' : 'table-wrap'}>
      {page.data.length === 0 ? (
        <p class="empty">{props.empty}</p>
      ) : (
        <table aria-label={props.label}>
          <thead>
            <tr>
              {props.columns.map((c) => (
                <th class={c.class}>{c.label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {page.data.map((item, i) => (
              <tr key={item.id ?? i}>
                {props.columns.map((c) => (
                  <td class={c.class}>{c.render(item)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(page.prev || page.next) && (
        <nav class="pager" aria-label="Pages">
          <button class="button-quiet" disabled={!page.prev} onClick={() => setCursor(page.prev)}>
            ← Newer
          </button>
          <button class="button-quiet" disabled={!page.next} onClick={() => setCursor(page.next)}>
            Older →
          </button>
        </nav>
      )}
    </div>
  );
}

export function Badge({ tone, children }: { tone: 'good' | 'bad' | 'neutral'; children: ComponentChildren }) {
  return <span class={`badge badge-${tone}`}>{children}</span>;
}
