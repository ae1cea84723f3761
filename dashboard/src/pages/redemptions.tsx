// Redemptions: newest first, paged; filters by voucher code, customer (id, email or source id), order and status; a
// Rollback (confirmed) on a succeeded redemption for roles that may write redemptions.
import { useCallback, useState } from 'preact/hooks';
import { call } from '../api.js';
import { AnswerNote, Badge, ErrorNote, FilterForm, formatTime, money, PageHeader, PagedTable, RefusedPage, TextFilter, type FormAnswer } from '../components.js';
import type { PageProps } from '../app.js';

interface Filters {
  voucherCode: string;
  customer: string;
  orderId: string;
  status: '' | 'SUCCEEDED' | 'ROLLED_BACK';
}

const NO_FILTERS: Filters = { voucherCode: '', customer: '', orderId: '', status: '' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The customer filter takes what staff know: an id, an email or a source id. Undefined: nobody matches. */
async function customerIdOf(given: string): Promise<string | undefined> {
  if (UUID.test(given)) return given;
  const found = await call('customers.list', given.includes('@') ? { email: given, limit: 1 } : { sourceId: given, limit: 1 });
  return found.data[0]?.id;
}

export function RedemptionsPage({ can }: PageProps) {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [version, setVersion] = useState(0);
  const [notice, setNotice] = useState<FormAnswer | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const load = useCallback(
    async (cursor: string | undefined) => {
      const customerId = filters.customer.trim() ? await customerIdOf(filters.customer.trim()) : undefined;
      if (filters.customer.trim() && !customerId) return { data: [] };
      return call('redemptions.list', {
        limit: 20,
        ...(filters.voucherCode.trim() ? { voucherCode: filters.voucherCode.trim() } : {}),
        ...(customerId ? { customerId } : {}),
        ...(filters.orderId.trim() ? { orderId: filters.orderId.trim() } : {}),
        ...(filters.status ? { status: filters.status } : {}),
        ...(cursor ? { cursor } : {}),
      });
    },
    [filters],
  );
  const rollback = async (id: string, code: string, amount: string) => {
    if (!confirm(`Roll back the redemption of ${code} (${amount})? The use and any gift credits are restored.`)) return;
    setError(undefined);
    try {
      const outcome = await call('redemptions.rollback', { id, reason: 'dashboard' });
      setNotice(outcome.ok ? { tone: 'good', text: `Rolled back the redemption of ${code}.` } : { tone: 'bad', text: outcome.message ?? outcome.code ?? 'Refused.' });
      setVersion((v) => v + 1);
    } catch (e) {
      setError(e);
    }
  };
  if (!can('redemptions:read')) return <RefusedPage title="Redemptions" what="redemptions" />;
  const text = (name: 'voucherCode' | 'customer' | 'orderId', label: string, placeholder: string) => (
    <TextFilter id={name} label={label} placeholder={placeholder} value={draft[name]} onInput={(value) => setDraft({ ...draft, [name]: value })} />
  );
  return (
    <section>
      <PageHeader title="Redemptions" />
      <FilterForm
        onApply={() => (setFilters(draft), setVersion((v) => v + 1))}
        onClear={() => (setDraft(NO_FILTERS), setFilters(NO_FILTERS), setVersion((v) => v + 1))}
      >
        {text('voucherCode', 'Voucher code', 'SUMMER-7KQ2')}
        {text('customer', 'Customer', 'id, email or source id')}
        {text('orderId', 'Order id', 'the shop’s order id')}
        <div class="filter">
          <label for="filter-status">Status</label>
          <select id="filter-status" value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value as Filters['status'] })}>
            <option value="">Any</option>
            <option value="SUCCEEDED">Succeeded</option>
            <option value="ROLLED_BACK">Rolled back</option>
          </select>
        </div>
      </FilterForm>
      <AnswerNote answer={notice} />
      <ErrorNote error={error} />
      <PagedTable
        label="Redemptions"
        load={load}
        version={version}
        empty={filters === NO_FILTERS ? 'No redemptions yet. They appear here as checkouts redeem vouchers.' : 'No redemptions match these filters.'}
        columns={[
          { label: 'Voucher', render: (r) => <a href={`#/vouchers/${encodeURIComponent(r.voucherCode)}`}><code>{r.voucherCode}</code></a> },
          { label: 'Kind', render: (r) => (r.kind === 'GIFT' ? 'Gift credits' : 'Discount') },
          { label: 'Amount', render: (r) => money(r.amount, r.currency), class: 'num' },
          { label: 'Order', render: (r) => <span>{money(r.orderAmount, r.currency)}{r.orderId && <span class="muted small"> · {r.orderId}</span>}</span> },
          { label: 'Customer', render: (r) => (r.customerId ? <a href={`#/customers/${r.customerId}`}>{r.customerId.slice(0, 8)}…</a> : '—') },
          { label: 'Status', render: (r) => (r.status === 'ROLLED_BACK' ? <Badge tone="bad">Rolled back</Badge> : <Badge tone="good">Succeeded</Badge>) },
          { label: 'When', render: (r) => formatTime(r.createdAt), class: 'nowrap' },
          {
            label: '',
            class: 'actions',
            render: (r) =>
              can('redemptions:write') && r.status === 'SUCCEEDED' ? (
                <button class="button-danger" onClick={() => rollback(r.id, r.voucherCode, money(r.amount, r.currency))}>
                  Rollback
                </button>
              ) : null,
          },
        ]}
      />
    </section>
  );
}
