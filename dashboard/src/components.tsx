// Pieces every page uses: a paged list over a list operation (cursors, empty state, errors), notes, dates, money,
// a loader for one-off reads, the secret-shown-once panel, a page refused to the role, a panel of facts, a filter
// form, a form's submit and Cancel buttons, and the answer line of a form.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from './api.js';

export function formatTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return date.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** Integer minor units as a decimal amount: 1250 EUR → "12.50 EUR". */
export function money(amount: number | null | undefined, currency?: string | null): string {
  if (amount === null || amount === undefined) return '—';
  const sign = amount < 0 ? '-' : '';
  const abs = Math.abs(amount);
  const units = `${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
  return `${sign}${units}${currency ? ' ' + currency : ''}`;
}

export function Refused({ what }: { what: string }) {
  return <p class="note">Your role cannot see {what}.</p>;
}

/** A whole page the role may not read: its title and the refusal. */
export function RefusedPage({ title, what }: { title: string; what: string }) {
  return (
    <section>
      <PageHeader title={title} />
      <Refused what={what} />
    </section>
  );
}

/** A panel of labelled facts about one resource. */
export function Facts({ label, children }: { label?: string; children: ComponentChildren }) {
  return (
    <div class="panel facts" aria-label={label}>
      {children}
    </div>
  );
}

export function Fact({ label, wide, children }: { label: string; wide?: boolean; children: ComponentChildren }) {
  return (
    <div class={wide ? 'fact-wide' : undefined}>
      <span class="muted small">{label}</span>
      <span>{children}</span>
    </div>
  );
}

export function ActiveBadge({ active, inactive = 'Inactive' }: { active: boolean; inactive?: string }) {
  return active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">{inactive}</Badge>;
}

/** A list's filters: the fields, then Apply filters and Clear. */
export function FilterForm({ onApply, onClear, children }: { onApply: () => void; onClear?: () => void; children: ComponentChildren }) {
  return (
    <form
      class="panel filters"
      aria-label="Filters"
      onSubmit={(e) => {
        e.preventDefault();
        onApply();
      }}
    >
      {children}
      <div class="filter-actions">
        <button type="submit" class="button-primary">
          Apply filters
        </button>
        {onClear && (
          <button type="button" class="button-quiet" onClick={onClear}>
            Clear
          </button>
        )}
      </div>
    </form>
  );
}

/** One labelled filter field (text or a date-time); `id` ties label and input. */
export function TextFilter(props: { id: string; label: string; value: string; onInput: (value: string) => void; placeholder?: string; type?: 'text' | 'datetime-local' }) {
  return (
    <div class="filter">
      <label for={`filter-${props.id}`}>{props.label}</label>
      <input id={`filter-${props.id}`} type={(props.type ?? 'text') as 'text'} placeholder={props.placeholder} value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />
    </div>
  );
}

export interface FormAnswer {
  tone: 'good' | 'bad';
  text: string;
}

/** What a form's last submission came to: a status line (an alert when refused). */
export function AnswerNote({ answer }: { answer: FormAnswer | undefined }) {
  if (!answer) return null;
  return (
    <p class={answer.tone === 'good' ? 'note note-good' : 'note note-error'} role={answer.tone === 'good' ? 'status' : 'alert'}>
      {answer.text}
    </p>
  );
}

/** One read: its value, error, and a reload. `deps` change → read again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { value: T | undefined; error: unknown; reload: () => void } {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    load()
      .then((v) => live && (setValue(v), setError(undefined)))
      .catch((e: unknown) => live && setError(e));
    return () => {
      live = false;
    };
  }, [...deps, version]);
  return { value, error, reload: () => setVersion((v) => v + 1) };
}

/** A secret (key, signing secret) shown this once, with Copy and Done. */
export function SecretOnce({ title, value, onDone, testId }: { title: string; value: string; onDone: () => void; testId?: string }) {
  return (
    <div class="panel secret" role="status">
      <p>
        <strong>{title}</strong> It is shown this once and cannot be read again.
      </p>
      <code class="secret-value" data-testid={testId}>
        {value}
      </code>
      <div class="form-actions">
        <button class="button-quiet" onClick={() => void navigator.clipboard?.writeText(value)}>
          Copy
        </button>
        <button class="button-quiet" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

/** A form's submit button and its Cancel. */
export function FormActions({ submit, onCancel }: { submit: string; onCancel: () => void }) {
  return (
    <div class="form-actions">
      <button type="submit" class="button-primary">
        {submit}
      </button>
      <button type="button" class="button-quiet" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="note note-error" role="alert">
      {messageOf(error)}
    </p>
  );
}

export function PageHeader({ title, back, children }: { title: string; back?: { href: string; label: string }; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <div>
        {back && (
          <a class="back small" href={back.href}>
            ← {back.label}
          </a>
        )}
        <h1>{title}</h1>
      </div>
      <div class="page-actions">{children}</div>
    </header>
  );
}

export interface Column<T> {
  label: string;
  render: (item: T) => ComponentChildren;
  class?: string;
}

export interface Page<T> {
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
  /** While set, the page shown is read again every this many milliseconds (e.g. while deliveries are under way). */
  refreshMs?: number;
  onLoaded?: (page: Page<T>) => void;
}) {
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [page, setPage] = useState<Page<T> | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);

  useEffect(() => setCursor(undefined), [props.version]);
  useEffect(() => {
    if (!props.refreshMs) return;
    const timer = setInterval(() => setTick((t) => t + 1), props.refreshMs);
    return () => clearInterval(timer);
  }, [props.refreshMs]);
  useEffect(() => {
    let live = true;
    if (tick === 0 || !props.refreshMs) setLoading(true);
    props
      .load(cursor)
      .then((loaded) => live && (setPage(loaded), setError(undefined), props.onLoaded?.(loaded)))
      .catch((e: unknown) => live && setError(e))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [cursor, props.version, props.load, tick]);

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
