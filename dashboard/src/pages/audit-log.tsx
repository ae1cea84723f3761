// The audit log: every change, newest first, with its actor; filters by operation, resource, actor and time; paged.
import { useCallback, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Badge, FilterForm, formatTime, PageHeader, PagedTable, RefusedPage, TextFilter } from '../components.js';
import type { PageProps } from '../app.js';

interface Filters {
  operation: string;
  resourceType: string;
  resourceId: string;
  actorType: '' | 'api_key' | 'staff_user' | 'system' | 'cli';
  actorId: string;
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { operation: '', resourceType: '', resourceId: '', actorType: '', actorId: '', from: '', to: '' };
const ACTOR_LABELS = { api_key: 'API key', staff_user: 'Staff user', system: 'System', cli: 'CLI' } as const;

/** `datetime-local` values are local time; the API takes ISO instants. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

export function AuditLogPage({ can }: PageProps) {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const load = useCallback(
    (cursor: string | undefined) => {
      const given = Object.fromEntries(Object.entries({ ...filters, from: instant(filters.from), to: instant(filters.to) }).filter(([, v]) => v));
      return call('audit.list', { limit: 25, ...given, ...(cursor ? { cursor } : {}) });
    },
    [filters],
  );
  if (!can('audit:read')) return <RefusedPage title="Audit log" what="the audit log" />;
  const field = (name: Exclude<keyof Filters, 'actorType'>, label: string, type: 'text' | 'datetime-local' = 'text') => (
    <TextFilter id={name} label={label} type={type} value={draft[name]} onInput={(value) => setDraft({ ...draft, [name]: value })} />
  );
  return (
    <section>
      <PageHeader title="Audit log" />
      <FilterForm onApply={() => setFilters(draft)} onClear={() => (setDraft(NO_FILTERS), setFilters(NO_FILTERS))}>
        {field('operation', 'Operation')}
        {field('resourceType', 'Resource type')}
        {field('resourceId', 'Resource id')}
        <div class="filter">
          <label for="filter-actorType">Actor type</label>
          <select id="filter-actorType" value={draft.actorType} onChange={(e) => setDraft({ ...draft, actorType: e.currentTarget.value as Filters['actorType'] })}>
            <option value="">Any</option>
            <option value="staff_user">Staff user</option>
            <option value="api_key">API key</option>
            <option value="system">System</option>
            <option value="cli">CLI</option>
          </select>
        </div>
        {field('actorId', 'Actor id')}
        {field('from', 'From', 'datetime-local')}
        {field('to', 'To', 'datetime-local')}
      </FilterForm>
      <PagedTable
        label="Audit entries"
        load={load}
        version={filters}
        empty="No entries match."
        columns={[
          { label: 'When', render: (e) => formatTime(e.createdAt), class: 'nowrap' },
          {
            label: 'Actor',
            render: (e) => (
              <span>
                <span class="muted small">{ACTOR_LABELS[e.actor.type]}</span> {e.actor.label}
              </span>
            ),
          },
          {
            label: 'Operation',
            render: (e) => (
              <span>
                <code>{e.operation}</code>
                {(e.changes?.after as { outcome?: string } | undefined)?.outcome === 'refused' && <Badge tone="bad">refused</Badge>}
              </span>
            ),
          },
          { label: 'Resource', render: (e) => (e.resourceId ? `${e.resourceType} ${e.resourceId.slice(0, 8)}…` : e.resourceType) },
          { label: 'Request', render: (e) => <code class="small">{e.requestId.slice(0, 8)}</code> },
        ]}
      />
    </section>
  );
}
