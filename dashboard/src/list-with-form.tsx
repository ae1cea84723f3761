// A list with its form above it, as the campaigns list and a promotion's tiers have: "New …" (for roles that may
// write) opens the form empty, a row's Edit opens it on that item; saving closes it and reads the list again.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { PagedTable, PageHeader, type Column, type Page } from './components.js';

/** What the form is open for: a new item, or one item of the list. */
export type FormFor<T> = { mode: 'create' } | { mode: 'edit'; item: T };

export interface FormEnds {
  onCancel: () => void;
  onSaved: () => void;
}

export function ListWithForm<T extends { id?: string }>(props: {
  /** A page's own list (its h1, a primary button) or a section of a page (an h2, a quiet button). */
  heading: { page: string } | { section: string };
  newLabel: string;
  canWrite: boolean;
  form: (open: FormFor<T>, ends: FormEnds) => ComponentChildren;
  label: string;
  load: (cursor: string | undefined) => Promise<Page<T>>;
  empty: string;
  /** `edit(item)` opens the form on that item (a column's Edit button calls it). */
  columns: (edit: (item: T) => void) => Column<T>[];
}) {
  const [open, setOpen] = useState<FormFor<T> | undefined>(undefined);
  const [version, setVersion] = useState(0);
  const button = props.canWrite && !open && (
    <button class={'page' in props.heading ? 'button-primary' : 'button-quiet'} onClick={() => setOpen({ mode: 'create' })}>
      {props.newLabel}
    </button>
  );
  const ends: FormEnds = { onCancel: () => setOpen(undefined), onSaved: () => (setOpen(undefined), setVersion((v) => v + 1)) };
  return (
    <>
      {'page' in props.heading ? (
        <PageHeader title={props.heading.page}>{button}</PageHeader>
      ) : (
        <div class="section-header settings-section">
          <h2>{props.heading.section}</h2>
          {button}
        </div>
      )}
      {open && <div key={open.mode === 'edit' ? open.item.id : 'new'}>{props.form(open, ends)}</div>}
      <PagedTable label={props.label} load={props.load} version={version} empty={props.empty} columns={props.columns((item) => setOpen({ mode: 'edit', item }))} />
    </>
  );
}
