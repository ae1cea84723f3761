// Campaigns: the list (newest first, paged) and a form to create one (shown only to roles that may).
import { useCallback, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Badge, ErrorNote, formatTime, PageHeader, PagedTable } from '../components.js';
import type { PageProps } from '../app.js';

const TYPES = ['DISCOUNT_COUPONS', 'GIFT_VOUCHERS', 'PROMOTION', 'LOYALTY_PROGRAM', 'REFERRAL_PROGRAM'] as const;
const TYPE_LABELS: Record<(typeof TYPES)[number], string> = {
  DISCOUNT_COUPONS: 'Discount coupons',
  GIFT_VOUCHERS: 'Gift vouchers',
  PROMOTION: 'Promotion',
  LOYALTY_PROGRAM: 'Loyalty program',
  REFERRAL_PROGRAM: 'Referral program',
};

function CreateCampaign({ onCreated, onCancel }: { onCreated: () => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<(typeof TYPES)[number]>('DISCOUNT_COUPONS');
  const [currency, setCurrency] = useState('');
  const [active, setActive] = useState(true);
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await call('campaigns.create', { name, type, active, ...(currency ? { currency: currency.toUpperCase() } : {}) });
      onCreated();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form class="panel form form-grid" onSubmit={submit} aria-label="New campaign">
      <h2>New campaign</h2>
      <label for="campaign-name">Name</label>
      <input id="campaign-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="campaign-type">Type</label>
      <select id="campaign-type" value={type} onChange={(e) => setType(e.currentTarget.value as (typeof TYPES)[number])}>
        {TYPES.map((t) => (
          <option value={t}>{TYPE_LABELS[t]}</option>
        ))}
      </select>
      <label for="campaign-currency">Currency</label>
      <input id="campaign-currency" placeholder="EUR (optional)" maxLength={3} value={currency} onInput={(e) => setCurrency(e.currentTarget.value)} />
      <label class="check">
        <input type="checkbox" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} /> Active
      </label>
      <ErrorNote error={error} />
      <div class="form-actions">
        <button type="submit" class="button-primary">
          Create campaign
        </button>
        <button type="button" class="button-quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function CampaignsPage({ can }: PageProps) {
  const [creating, setCreating] = useState(false);
  const [version, setVersion] = useState(0);
  const load = useCallback((cursor: string | undefined) => call('campaigns.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <PageHeader title="Campaigns">
        {can('campaigns:write') && !creating && (
          <button class="button-primary" onClick={() => setCreating(true)}>
            New campaign
          </button>
        )}
      </PageHeader>
      {creating && (
        <CreateCampaign
          onCancel={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            setVersion((v) => v + 1);
          }}
        />
      )}
      <PagedTable
        label="Campaigns"
        load={load}
        version={version}
        empty="No campaigns yet. Create one to start issuing vouchers."
        columns={[
          { label: 'Name', render: (c) => <strong>{c.name}</strong> },
          { label: 'Type', render: (c) => TYPE_LABELS[c.type as (typeof TYPES)[number]] ?? c.type },
          { label: 'Status', render: (c) => (c.active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">Inactive</Badge>) },
          { label: 'Currency', render: (c) => c.currency ?? '—' },
          { label: 'Created', render: (c) => formatTime(c.createdAt), class: 'nowrap' },
        ]}
      />
    </section>
  );
}
