// Campaigns: the list, create and edit (the voucher template's discount of any kind with its targets, prefilled, or gift
// credits; its currency or the workspace default; a referral program's referrer reward), and a campaign's page: its
// vouchers and bulk generation. Write controls only for roles that may.
import { useCallback, useState } from 'preact/hooks';
import type { InputOf, OutputOf } from '../../../src/client/operation-types.js';
import { call } from '../api.js';
import { ActiveBadge, ErrorNote, Fact, Facts, FormActions, formatTime, money, PagedTable, PageHeader, useLoad } from '../components.js';
import type { PageProps } from '../app.js';
import { ListWithForm, type FormEnds } from '../list-with-form.js';
import { CurrencyField, ReferrerReward } from './campaign-fields.js';
import { discountDraftOf, discountFrom, kindOf, minorUnits, type DiscountDraft, type DiscountKind } from './discount-draft.js';
import { DiscountFields } from './discount-fields.js';
import { PromotionTiers } from './tiers.js';
import { discountText, VoucherColumns } from './vouchers.js';

type Campaign = OutputOf<'campaigns.get'>;
type Template = NonNullable<InputOf<'campaigns.create'>['voucher']>;

const TYPES = ['DISCOUNT_COUPONS', 'GIFT_VOUCHERS', 'PROMOTION', 'LOYALTY_PROGRAM', 'REFERRAL_PROGRAM'] as const;
const TYPE_LABELS: Record<(typeof TYPES)[number], string> = {
  DISCOUNT_COUPONS: 'Discount coupons',
  GIFT_VOUCHERS: 'Gift vouchers',
  PROMOTION: 'Promotion',
  LOYALTY_PROGRAM: 'Loyalty program',
  REFERRAL_PROGRAM: 'Referral program',
};

const majorUnits = (minor: number | undefined) => (minor === undefined ? '' : money(minor));

interface Draft {
  name: string;
  type: (typeof TYPES)[number];
  currency: string;
  active: boolean;
  /** A discount kind, gift credits, or nothing (each voucher says). */
  value: DiscountKind | 'gift' | 'none';
  /** The discount's fields; `discount.value` holds the gift amount too. */
  discount: DiscountDraft;
  redemptionLimit: string;
  referrerRewardId: string;
}

function draftOf(c: Campaign | undefined): Draft {
  const t = c?.voucher;
  const d = t?.discount;
  return {
    name: c?.name ?? '',
    type: c?.type ?? 'DISCOUNT_COUPONS',
    currency: c?.currency ?? '',
    active: c?.active ?? true,
    value: t?.gift ? 'gift' : (kindOf(d) ?? (c ? 'none' : 'percent')),
    discount: { ...discountDraftOf(d), ...(t?.gift ? { value: majorUnits(t.gift.amount) } : {}) },
    redemptionLimit: t?.redemptionLimit == null ? '' : String(t.redemptionLimit),
    referrerRewardId: c?.referral?.referrerRewards[0]?.rewardId ?? '',
  };
}

/** The template the form describes, on top of what the campaign had (fields the form does not show are kept). */
function templateOf(draft: Draft, previous: Template | null | undefined, defaultCurrency: string | null | undefined): Template | undefined | string {
  const base: Template = { ...(previous ?? {}) };
  delete base.discount;
  delete base.gift;
  const currency = draft.currency.trim().toUpperCase() || defaultCurrency || '';
  if (draft.value === 'gift') {
    const minor = minorUnits(draft.discount.value);
    if (minor === undefined) return 'The amount needs digits with at most two decimals, e.g. 12.50.';
    if (!currency) return 'Gift credits need a currency.';
    base.gift = { amount: minor, currency };
    base.type = 'GIFT_CARD';
  } else if (draft.value !== 'none') {
    const discount = discountFrom(draft.value, draft.discount);
    if (typeof discount === 'string') return discount;
    base.discount = discount;
    base.type = 'DISCOUNT';
  }
  const limit = draft.redemptionLimit.trim();
  if (limit && !/^\d{1,9}$/.test(limit)) return 'Uses per voucher must be a whole number.';
  base.redemptionLimit = limit ? Number(limit) : null;
  return Object.keys(base).length ? base : undefined;
}

const EXTRA_CHOICES = [
  { value: 'gift', label: 'Gift credits' },
  { value: 'none', label: 'Set per voucher' },
];

/** Amounts that are money need a currency: the API answers 400 currency_required without one. */
const isMoney = (d: Draft) => ['amount', 'fixed', 'gift'].includes(d.value) || (d.value === 'percent' && d.discount.amountLimit.trim() !== '');

function CampaignForm({ campaign, can, onSaved, onCancel }: { campaign?: Campaign; can: PageProps['can'] } & FormEnds) {
  const [draft, setDraft] = useState<Draft>(draftOf(campaign));
  const [error, setError] = useState<unknown>(undefined);
  // undefined: not known (the role cannot read the workspace); null: the workspace has none.
  const workspace = useLoad(() => (can('workspaces:read') ? call('workspaces.current', {}) : Promise.resolve(undefined)), []);
  const defaultCurrency = workspace.value ? workspace.value.defaultCurrency : undefined;
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft({ ...draft, [key]: value });
  const referral = (campaign?.type ?? draft.type) === 'REFERRAL_PROGRAM';
  const submit = async (event: Event) => {
    event.preventDefault();
    const voucher = templateOf(draft, campaign?.voucher, defaultCurrency);
    if (typeof voucher === 'string') return setError(new Error(voucher));
    const currency = draft.currency.trim().toUpperCase();
    // The form shows the first referrer reward; the others a program may have are kept.
    const others = campaign?.referral?.referrerRewards.slice(1) ?? [];
    const changed = !campaign || draft.referrerRewardId !== campaign.referral?.referrerRewards[0]?.rewardId;
    const settings = referral && changed ? { referral: { ...campaign?.referral, referrerRewards: [{ rewardId: draft.referrerRewardId }, ...others] } } : {};
    try {
      await (campaign
        ? call('campaigns.update', { id: campaign.id, name: draft.name, active: draft.active, currency: currency || null, voucher: voucher ?? null, ...settings })
        : call('campaigns.create', { name: draft.name, type: draft.type, active: draft.active, ...(currency ? { currency } : {}), ...(voucher ? { voucher } : {}), ...settings }));
      onSaved();
    } catch (e) {
      setError(e);
    }
  };
  const title = campaign ? 'Edit campaign' : 'New campaign';
  return (
    <form class="panel form form-grid" onSubmit={submit} aria-label={title}>
      <h2>{title}</h2>
      <label for="campaign-name">Name</label>
      <input id="campaign-name" required maxLength={200} value={draft.name} onInput={(e) => set('name', e.currentTarget.value)} />
      {!campaign && (
        <>
          <label for="campaign-type">Type</label>
          <select id="campaign-type" value={draft.type} onChange={(e) => setDraft({ ...draft, type: e.currentTarget.value as Draft['type'], value: e.currentTarget.value === 'GIFT_VOUCHERS' ? 'gift' : 'percent' })}>
            {TYPES.map((t) => (
              <option value={t}>{TYPE_LABELS[t]}</option>
            ))}
          </select>
        </>
      )}
      {referral && <ReferrerReward value={draft.referrerRewardId} onChange={(id) => set('referrerRewardId', id)} />}
      <DiscountFields
        id="campaign"
        label="Each voucher gives"
        valueLabel="Value"
        choice={draft.value}
        extraChoices={EXTRA_CHOICES}
        onChoice={(value) => set('value', value as Draft['value'])}
        draft={draft.discount}
        onChange={(discount) => set('discount', discount)}
      />
      <CurrencyField value={draft.currency} money={isMoney(draft)} defaultCurrency={defaultCurrency} onInput={(value) => set('currency', value)} />
      <label for="campaign-limit">Uses per voucher</label>
      <input id="campaign-limit" inputMode="numeric" placeholder="unlimited" value={draft.redemptionLimit} onInput={(e) => set('redemptionLimit', e.currentTarget.value)} />
      <label class="check">
        <input type="checkbox" checked={draft.active} onChange={(e) => set('active', e.currentTarget.checked)} /> Active
      </label>
      <ErrorNote error={error} />
      <FormActions submit={campaign ? 'Save campaign' : 'Create campaign'} onCancel={onCancel} />
    </form>
  );
}

const CHUNK = 500;

/** Bulk generation in chunks of 500 (each one transaction), so the bar shows real progress and a stop keeps what is made. */
function Generate({ campaignId, onProgress, onDone }: { campaignId: string; onProgress: () => void; onDone: () => void }) {
  const [count, setCount] = useState('100');
  const [prefix, setPrefix] = useState('');
  const [made, setMade] = useState<number | undefined>(undefined);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<unknown>(undefined);
  const [running, setRunning] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const wanted = Number(count);
    if (!Number.isInteger(wanted) || wanted < 1 || wanted > 100_000) return setError(new Error('Count must be a whole number from 1 to 100000.'));
    setError(undefined);
    setRunning(true);
    setTotal(wanted);
    setMade(0);
    let done = 0;
    try {
      while (done < wanted) {
        const n = Math.min(CHUNK, wanted - done);
        const generated = await call('vouchers.generate', { id: campaignId, count: n, ...(prefix ? { codeConfig: { prefix } } : {}) });
        done += generated.count;
        setMade(done);
        onProgress();
      }
      onDone();
    } catch (e) {
      setError(e);
    } finally {
      setRunning(false);
    }
  };
  return (
    <form class="panel inline-form" onSubmit={submit} aria-label="Generate vouchers">
      <label for="generate-count">Generate</label>
      <input id="generate-count" class="narrow" inputMode="numeric" value={count} onInput={(e) => setCount(e.currentTarget.value)} />
      <label for="generate-prefix">Prefix</label>
      <input id="generate-prefix" class="narrow" placeholder="optional" value={prefix} onInput={(e) => setPrefix(e.currentTarget.value)} />
      <button type="submit" class="button-primary" disabled={running}>
        Generate vouchers
      </button>
      {made !== undefined && (
        <div class="progress-line">
          <progress max={total} value={made} aria-label="Generation progress" />
          <span class="small" role="status">
            {made} of {total} generated{running ? '…' : ''}
          </span>
        </div>
      )}
      <ErrorNote error={error} />
    </form>
  );
}

function CampaignDetail({ id, can }: { id: string; can: PageProps['can'] }) {
  const campaign = useLoad(() => call('campaigns.get', { id }), [id]);
  const [editing, setEditing] = useState(false);
  const [version, setVersion] = useState(0);
  const vouchers = useCallback((cursor: string | undefined) => call('vouchers.list', { campaignId: id, limit: 20, ...(cursor ? { cursor } : {}) }), [id]);
  const c = campaign.value;
  const t = c?.voucher;
  return (
    <section>
      <PageHeader title={c?.name ?? 'Campaign'} back={{ href: '#/campaigns', label: 'Campaigns' }}>
        {c && can('campaigns:write') && !editing && (
          <button class="button-quiet" onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
      </PageHeader>
      <ErrorNote error={campaign.error} />
      {c && editing && <CampaignForm campaign={c} can={can} onCancel={() => setEditing(false)} onSaved={() => (setEditing(false), campaign.reload())} />}
      {c && !editing && (
        <Facts>
          <Fact label="Type">{TYPE_LABELS[c.type]}</Fact>
          <Fact label="Status">
            <ActiveBadge active={c.active} />
          </Fact>
          <Fact label="Each voucher gives">{t?.gift ? `${money(t.gift.amount, t.gift.currency)} gift credits` : t?.discount ? discountText({ discount: t.discount, currency: c.currency }) : 'Set per voucher'}</Fact>
          <Fact label="Uses per voucher">{t?.redemptionLimit ?? 'Unlimited'}</Fact>
          <Fact label="Currency">{c.currency ?? '—'}</Fact>
          <Fact label="Created">{formatTime(c.createdAt)}</Fact>
        </Facts>
      )}
      {c?.type === 'PROMOTION' && can('campaigns:read') && <PromotionTiers campaignId={id} currency={c.currency ?? null} can={can} />}
      <div class="section-header settings-section">
        <h2>Vouchers</h2>
      </div>
      {c && can('vouchers:write') && <Generate campaignId={id} onProgress={() => setVersion((v) => v + 1)} onDone={() => setVersion((v) => v + 1)} />}
      {can('vouchers:read') && <PagedTable label="Campaign vouchers" load={vouchers} version={version} empty="No vouchers in this campaign yet." columns={VoucherColumns()} />}
    </section>
  );
}

function CampaignList({ can }: Pick<PageProps, 'can'>) {
  const load = useCallback((cursor: string | undefined) => call('campaigns.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <ListWithForm<Campaign>
        heading={{ page: 'Campaigns' }}
        newLabel="New campaign"
        canWrite={can('campaigns:write')}
        form={(_open, ends) => <CampaignForm can={can} {...ends} />}
        label="Campaigns"
        load={load}
        empty="No campaigns yet. Create one to start issuing vouchers."
        columns={() => [
          { label: 'Name', render: (c) => <a href={`#/campaigns/${c.id}`}><strong>{c.name}</strong></a> },
          { label: 'Type', render: (c) => TYPE_LABELS[c.type] ?? c.type },
          { label: 'Status', render: (c) => <ActiveBadge active={c.active} /> },
          { label: 'Currency', render: (c) => c.currency ?? '—' },
          { label: 'Created', render: (c) => formatTime(c.createdAt), class: 'nowrap' },
        ]}
      />
    </section>
  );
}

export function CampaignsPage({ can, route }: PageProps) {
  return route[1] ? <CampaignDetail key={route[1]} id={route[1]} can={can} /> : <CampaignList can={can} />;
}
