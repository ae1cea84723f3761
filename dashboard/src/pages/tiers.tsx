// A PROMOTION campaign's automatic tiers: the list (what each gives, with its target) and the form that adds one,
// with a percent or amount off (optionally on target items), free shipping, or buy X get Y.
import { useCallback, useState } from 'preact/hooks';
import type { OutputOf } from '../../../src/client/operation-types.js';
import { call } from '../api.js';
import { Badge, ErrorNote, PagedTable } from '../components.js';
import type { PageProps } from '../app.js';
import { discountFrom, discountSummary, ItemFields, itemsDraftOf, type DiscountKind } from './discount-fields.js';

type Tier = OutputOf<'promotions.getTier'>;

function TierForm({ campaignId, onSaved, onCancel }: { campaignId: string; onSaved: (t: Tier) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<DiscountKind>('percent');
  const [value, setValue] = useState('');
  const [items, setItems] = useState(itemsDraftOf(undefined));
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    const discount = discountFrom(kind, value, items);
    if (typeof discount === 'string') return setError(new Error(discount));
    try {
      onSaved(await call('promotions.createTier', { id: campaignId, name, discount }));
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form class="panel form form-grid" onSubmit={submit} aria-label="New tier">
      <h2>New tier</h2>
      <label for="tier-name">Name</label>
      <input id="tier-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="tier-discount">The tier gives</label>
      <div class="row">
        <select id="tier-discount" value={kind} onChange={(e) => setKind(e.currentTarget.value as DiscountKind)}>
          <option value="percent">Percent off</option>
          <option value="amount">Amount off</option>
          <option value="free-shipping">Free shipping</option>
          <option value="buy-x-get-y">Buy X get Y</option>
        </select>
        {(kind === 'percent' || kind === 'amount') && (
          <input aria-label="Tier value" required inputMode="decimal" placeholder={kind === 'percent' ? '10' : '25.00'} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        )}
      </div>
      <ItemFields id="tier" kind={kind} items={items} onChange={setItems} />
      <ErrorNote error={error} />
      <div class="form-actions">
        <button type="submit" class="button-primary">
          Create tier
        </button>
        <button type="button" class="button-quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function PromotionTiers({ campaignId, currency, can }: { campaignId: string; currency: string | null; can: PageProps['can'] }) {
  const [creating, setCreating] = useState(false);
  const [version, setVersion] = useState(0);
  const load = useCallback((cursor: string | undefined) => call('promotions.listTiers', { id: campaignId, limit: 20, ...(cursor ? { cursor } : {}) }), [campaignId]);
  return (
    <>
      <div class="section-header settings-section">
        <h2>Tiers</h2>
        {can('campaigns:write') && !creating && (
          <button class="button-quiet" onClick={() => setCreating(true)}>
            New tier
          </button>
        )}
      </div>
      {creating && <TierForm campaignId={campaignId} onCancel={() => setCreating(false)} onSaved={() => (setCreating(false), setVersion((v) => v + 1))} />}
      <PagedTable
        label="Promotion tiers"
        load={load}
        version={version}
        empty="No tiers yet: a tier applies without a code."
        columns={[
          { label: 'Name', render: (t: Tier) => <strong>{t.name}</strong> },
          { label: 'Gives', render: (t: Tier) => discountSummary(t.discount, currency) },
          { label: 'Status', render: (t: Tier) => (t.active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">Inactive</Badge>) },
          { label: 'Used', render: (t: Tier) => String(t.redemption.redeemedCount) },
        ]}
      />
    </>
  );
}
