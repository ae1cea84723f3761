// Customers: the list (find by email or source id), and a customer's page with its redemptions.
import { useCallback, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Badge, ErrorNote, Fact, Facts, formatTime, money, PagedTable, PageHeader, Refused, RefusedPage, useLoad } from '../components.js';
import type { PageProps } from '../app.js';

function CustomerList() {
  const [draft, setDraft] = useState('');
  const [find, setFind] = useState('');
  const load = useCallback(
    (cursor: string | undefined) =>
      call('customers.list', { limit: 20, ...(find ? (find.includes('@') ? { email: find } : { sourceId: find }) : {}), ...(cursor ? { cursor } : {}) }),
    [find],
  );
  return (
    <section>
      <PageHeader title="Customers">
        <form class="inline-form" role="search" onSubmit={(e) => (e.preventDefault(), setFind(draft.trim()))}>
          <input aria-label="Email or source id" placeholder="Email or source id" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
          <button type="submit" class="button-primary">
            Find
          </button>
          {find && (
            <button type="button" class="button-quiet" onClick={() => (setDraft(''), setFind(''))}>
              Clear
            </button>
          )}
        </form>
      </PageHeader>
      <PagedTable
        label="Customers"
        load={load}
        version={find}
        empty={find ? 'No customer matches.' : 'No customers yet. They appear when created or at their first redemption.'}
        columns={[
          { label: 'Name', render: (c) => <a href={`#/customers/${c.id}`}>{c.name ?? c.email ?? c.sourceId ?? c.id.slice(0, 8)}</a> },
          { label: 'Email', render: (c) => c.email ?? '—' },
          { label: 'Source id', render: (c) => (c.sourceId ? <code>{c.sourceId}</code> : '—') },
          { label: 'Created', render: (c) => formatTime(c.createdAt), class: 'nowrap' },
        ]}
      />
    </section>
  );
}

function CustomerDetail({ id, can }: { id: string; can: PageProps['can'] }) {
  const customer = useLoad(() => call('customers.get', { id }), [id]);
  const redemptions = useCallback((cursor: string | undefined) => call('redemptions.list', { customerId: id, limit: 10, ...(cursor ? { cursor } : {}) }), [id]);
  const c = customer.value;
  const metadata = c ? Object.entries(c.metadata ?? {}) : [];
  return (
    <section>
      <PageHeader title={c ? (c.name ?? c.email ?? c.sourceId ?? 'Customer') : 'Customer'} back={{ href: '#/customers', label: 'Customers' }} />
      <ErrorNote error={customer.error} />
      {c && (
        <Facts>
          <Fact label="Email">{c.email ?? '—'}</Fact>
          <Fact label="Source id">{c.sourceId ? <code>{c.sourceId}</code> : '—'}</Fact>
          <Fact label="Id"><code>{c.id}</code></Fact>
          <Fact label="Since">{formatTime(c.createdAt)}</Fact>
          {metadata.map(([key, value]) => (
            <Fact label={key}>
              <code>{JSON.stringify(value)}</code>
            </Fact>
          ))}
        </Facts>
      )}
      <div class="settings-section">
        <h2>Redemptions</h2>
        {can('redemptions:read') ? (
          <PagedTable
            label="Customer redemptions"
            load={redemptions}
            empty="No redemptions by this customer."
            columns={[
              { label: 'Voucher', render: (r) => <a href={`#/vouchers/${encodeURIComponent(r.voucherCode)}`}><code>{r.voucherCode}</code></a> },
              { label: 'Amount', render: (r) => money(r.amount, r.currency), class: 'num' },
              { label: 'Order', render: (r) => r.orderId ?? money(r.orderAmount, r.currency) },
              { label: 'Status', render: (r) => (r.status === 'ROLLED_BACK' ? <Badge tone="bad">Rolled back</Badge> : <Badge tone="good">Succeeded</Badge>) },
              { label: 'When', render: (r) => formatTime(r.createdAt), class: 'nowrap' },
            ]}
          />
        ) : (
          <Refused what="redemptions" />
        )}
      </div>
    </section>
  );
}

export function CustomersPage({ can, route }: PageProps) {
  if (!can('customers:read')) return <RefusedPage title="Customers" what="customers" />;
  return route[1] ? <CustomerDetail key={route[1]} id={route[1]} can={can} /> : <CustomerList />;
}
