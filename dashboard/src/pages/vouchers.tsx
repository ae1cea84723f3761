// Vouchers: the list and find-by-code, and a voucher's page: its settings, disable/enable, its redemptions and, for
// a gift card, its balance ledger.
import { useCallback, useState } from 'preact/hooks';
import type { OutputOf } from '../../../src/client/operation-types.js';
import { call } from '../api.js';
import { Badge, ErrorNote, Fact, Facts, formatTime, money, PagedTable, PageHeader, Refused, RefusedPage, useLoad } from '../components.js';
import type { PageProps } from '../app.js';
import { go } from '../routes.js';
import { discountSummary } from './discount-draft.js';

type Voucher = OutputOf<'vouchers.get'>;

export function discountText(v: Pick<Voucher, 'discount' | 'currency'>): string {
  return v.discount ? discountSummary(v.discount, v.currency) : '—';
}

export const uses = (v: Voucher) => `${v.redemption.redeemedCount}${v.redemption.limit === null ? '' : ' / ' + v.redemption.limit}`;
export const valueOf = (v: Voucher) => (v.gift ? `${money(v.gift.balance, v.gift.currency)} of ${money(v.gift.amount)}` : discountText(v));

export function VoucherColumns() {
  return [
    { label: 'Code', render: (v: Voucher) => <a href={`#/vouchers/${encodeURIComponent(v.code)}`}><code>{v.code}</code></a> },
    { label: 'Type', render: (v: Voucher) => v.type.replace('_', ' ').toLowerCase() },
    { label: 'Value', render: (v: Voucher) => valueOf(v) },
    { label: 'Used', render: (v: Voucher) => uses(v), class: 'num' },
    { label: 'Status', render: (v: Voucher) => (v.active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">Disabled</Badge>) },
    { label: 'Created', render: (v: Voucher) => formatTime(v.createdAt), class: 'nowrap' },
  ];
}

function VoucherList() {
  const [code, setCode] = useState('');
  const load = useCallback((cursor: string | undefined) => call('vouchers.list', { limit: 20, ...(cursor ? { cursor } : {}) }), []);
  return (
    <section>
      <PageHeader title="Vouchers">
        <form
          class="inline-form"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            if (code.trim()) go(`vouchers/${encodeURIComponent(code.trim())}`);
          }}
        >
          <input aria-label="Voucher code" placeholder="Find by code" value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          <button type="submit" class="button-primary">
            Find
          </button>
        </form>
      </PageHeader>
      <PagedTable label="Vouchers" load={load} empty="No vouchers yet. Create them in a campaign, or with POST /api/v1/vouchers." columns={VoucherColumns()} />
    </section>
  );
}

function VoucherDetail({ code, can }: { code: string; can: PageProps['can'] }) {
  const voucher = useLoad(() => call('vouchers.get', { code }), [code]);
  const [error, setError] = useState<unknown>(undefined);
  const [version, setVersion] = useState(0);
  const redemptions = useCallback((cursor: string | undefined) => call('redemptions.list', { voucherCode: code, limit: 10, ...(cursor ? { cursor } : {}) }), [code]);
  const ledger = useCallback((cursor: string | undefined) => call('vouchers.transactions', { code, limit: 10, ...(cursor ? { cursor } : {}) }), [code]);
  const v = voucher.value;
  const toggle = async () => {
    if (!v) return;
    if (v.active && !confirm(`Disable ${v.code}? Validation and redemption answer voucher_disabled until it is enabled again.`)) return;
    try {
      await call(v.active ? 'vouchers.disable' : 'vouchers.enable', { code });
      voucher.reload();
      setVersion((n) => n + 1);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section>
      <PageHeader title={code} back={{ href: '#/vouchers', label: 'Vouchers' }}>
        {v && can('vouchers:write') && (
          <button class={v.active ? 'button-danger' : 'button-primary'} onClick={toggle}>
            {v.active ? 'Disable' : 'Enable'}
          </button>
        )}
      </PageHeader>
      <ErrorNote error={voucher.error ?? error} />
      {v && (
        <Facts>
          <Fact label="Status">{v.active ? <Badge tone="good">Active</Badge> : <Badge tone="neutral">Disabled</Badge>}</Fact>
          <Fact label="Type">{v.type.replace('_', ' ').toLowerCase()}</Fact>
          <Fact label={v.gift ? 'Balance' : 'Discount'}>{valueOf(v)}</Fact>
          <Fact label="Used">{uses(v)}</Fact>
          <Fact label="Per customer">{v.perCustomerLimit ?? 'No limit'}</Fact>
          <Fact label="Valid">
            {v.startDate || v.expirationDate ? `${v.startDate ? formatTime(v.startDate) : 'now'} – ${v.expirationDate ? formatTime(v.expirationDate) : 'open'}` : 'Always'}
          </Fact>
          {v.campaignId && (
            <Fact label="Campaign">
              <a href={`#/campaigns/${v.campaignId}`}>{v.campaignId.slice(0, 8)}…</a>
            </Fact>
          )}
          {v.customerId && (
            <Fact label="Only for">
              <a href={`#/customers/${v.customerId}`}>{v.customerId.slice(0, 8)}…</a>
            </Fact>
          )}
          <Fact label="Created">{formatTime(v.createdAt)}</Fact>
        </Facts>
      )}
      {v && (
        <div class="settings-section">
          <h2>Redemptions</h2>
          {can('redemptions:read') ? (
            <PagedTable
              label="Voucher redemptions"
              load={redemptions}
              version={version}
              empty="Not redeemed yet."
              columns={[
                { label: 'Amount', render: (r) => money(r.amount, r.currency), class: 'num' },
                { label: 'Order', render: (r) => r.orderId ?? money(r.orderAmount, r.currency) },
                { label: 'Customer', render: (r) => (r.customerId ? <a href={`#/customers/${r.customerId}`}>{r.customerId.slice(0, 8)}…</a> : '—') },
                { label: 'Status', render: (r) => (r.status === 'ROLLED_BACK' ? <Badge tone="bad">Rolled back</Badge> : <Badge tone="good">Succeeded</Badge>) },
                { label: 'When', render: (r) => formatTime(r.createdAt), class: 'nowrap' },
              ]}
            />
          ) : (
            <Refused what="redemptions" />
          )}
        </div>
      )}
      {v?.type === 'GIFT_CARD' && (
        <div class="settings-section">
          <h2>Ledger</h2>
          <PagedTable
            label="Gift card ledger"
            load={ledger}
            version={version}
            empty="No entries."
            columns={[
              { label: 'Entry', render: (e) => e.type.replace('_', ' ').toLowerCase() },
              { label: 'Change', render: (e) => <span class={e.amount < 0 ? 'amount-out' : 'amount-in'}>{e.amount > 0 ? '+' : ''}{money(e.amount, v.gift?.currency)}</span>, class: 'num' },
              { label: 'Balance after', render: (e) => money(e.balanceAfter, v.gift?.currency), class: 'num' },
              { label: 'When', render: (e) => formatTime(e.createdAt), class: 'nowrap' },
            ]}
          />
        </div>
      )}
    </section>
  );
}

export function VouchersPage({ can, route }: PageProps) {
  if (!can('vouchers:read')) return <RefusedPage title="Vouchers" what="vouchers" />;
  return route[1] ? <VoucherDetail key={route[1]} code={decodeURIComponent(route[1])} can={can} /> : <VoucherList />;
}
