// A PROMOTION campaign's automatic tiers: the list (what each gives, with its target) and the form that adds one or
// edits one (name, active, the discount of any kind with its targets, prefilled), through promotions.createTier/updateTier.
import { useCallback, useState } from 'preact/hooks';
import type { OutputOf } from '../../../src/client/operation-types.js';
import { call } from '../api.js';
import { ActiveBadge, ErrorNote, FormActions } from '../components.js';
import type { PageProps } from '../app.js';
import { ListWithForm, type FormEnds } from '../list-with-form.js';
import { discountDraftOf, discountFrom, discountSummary, kindOf, type DiscountKind } from './discount-draft.js';
import { DiscountFields } from './discount-fields.js';

type Tier = OutputOf<'promotions.getTier'>;

function TierForm({ campaignId, tier, onSaved, onCancel }: { campaignId: string; tier?: Tier } & FormEnds) {
  const [name, setName] = useState(tier?.name ?? '');
  const [active, setActive] = useState(tier?.active ?? true);
  const [kind, setKind] = useState<DiscountKind>(kindOf(tier?.discount) ?? 'percent');
  const [draft, setDraft] = useState(discountDraftOf(tier?.discount));
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    const discount = discountFrom(kind, draft);
    if (typeof discount === 'string') return setError(new Error(discount));
    try {
      await (tier ? call('promotions.updateTier', { id: tier.id, name, active, discount }) : call('promotions.createTier', { id: campaignId, name, active, discount }));
      onSaved();
    } catch (e) {
      setError(e);
    }
  };
  const title = tier ? `Edit tier ${tier.name}` : 'New tier';
  return (
    <form class="panel form form-grid" onSubmit={submit} aria-label={tier ? 'Edit tier' : 'New tier'}>
      <h2>{title}</h2>
      <label for="tier-name">Name</label>
      <input id="tier-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <DiscountFields id="tier" label="The tier gives" valueLabel="Tier value" choice={kind} onChoice={(c) => setKind(c as DiscountKind)} draft={draft} onChange={setDraft} />
      <label class="check">
        <input type="checkbox" checked={active} onChange={(e) => setActive(e.currentTarget.checked)} /> Active
      </label>
      <ErrorNote error={error} />
      <FormActions submit={tier ? 'Save tier' : 'Create tier'} onCancel={onCancel} />
    </form>
  );
}

export function PromotionTiers({ campaignId, currency, can }: { campaignId: string; currency: string | null; can: PageProps['can'] }) {
  const canWrite = can('campaigns:write');
  const load = useCallback((cursor: string | undefined) => call('promotions.listTiers', { id: campaignId, limit: 20, ...(cursor ? { cursor } : {}) }), [campaignId]);
  return (
    <ListWithForm<Tier>
      heading={{ section: 'Tiers' }}
      newLabel="New tier"
      canWrite={canWrite}
      form={(open, ends) => <TierForm campaignId={campaignId} tier={open.mode === 'edit' ? open.item : undefined} {...ends} />}
      label="Promotion tiers"
      load={load}
      empty="No tiers yet: a tier applies without a code."
      columns={(edit) => [
        { label: 'Name', render: (t) => <strong>{t.name}</strong> },
        { label: 'Gives', render: (t) => discountSummary(t.discount, currency) },
        { label: 'Status', render: (t) => <ActiveBadge active={t.active} /> },
        { label: 'Used', render: (t) => String(t.redemption.redeemedCount) },
        ...(canWrite
          ? [
              {
                label: '',
                class: 'actions',
                render: (t: Tier) => (
                  <button class="button-quiet" aria-label={`Edit ${t.name}`} onClick={() => edit(t)}>
                    Edit
                  </button>
                ),
              },
            ]
          : []),
      ]}
    />
  );
}
