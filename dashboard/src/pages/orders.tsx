// Orders: the list (newest first, by status or source id), and an order's page with its items, its redemptions, its
// returns (amount, items, what each gave back) and, for roles that may write orders, the return form.
import { useCallback, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Badge, ErrorNote, Fact, Facts, FilterForm, formatTime, money, PagedTable, PageHeader, Refused, RefusedPage, TextFilter, useLoad } from '../components.js';
import type { OutputOf } from '../../../src/client/operation-types.js';
import type { PageProps } from '../app.js';
import { ReturnForm } from './order-return-form.js';

type OrderStatus = 'CREATED' | 'PAID' | 'CANCELED' | 'FULFILLED' | 'PARTIALLY_RETURNED' | 'RETURNED';
const STATUS_NAMES: Record<OrderStatus, string> = {
  CREATED: 'Created',
  PAID: 'Paid',
  CANCELED: 'Canceled',
  FULFILLED: 'Fulfilled',
  PARTIALLY_RETURNED: 'Partially returned',
  RETURNED: 'Returned',
};

export function OrderStatusBadge({ status }: { status: OrderStatus }) {
  const tone = status === 'PAID' || status === 'FULFILLED' ? 'good' : status === 'CREATED' ? 'neutral' : 'bad';
  return <Badge tone={tone}>{STATUS_NAMES[status]}</Badge>;
}

interface Filters {
  sourceId: string;
  status: '' | OrderStatus;
}
const NO_FILTERS: Filters = { sourceId: '', status: '' };

function OrderList() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const load = useCallback(
    (cursor: string | undefined) =>
      call('orders.list', {
        limit: 20,
        ...(filters.sourceId.trim() ? { sourceId: filters.sourceId.trim() } : {}),
        ...(filters.status ? { status: filters.status } : {}),
        ...(cursor ? { cursor } : {}),
      }),
    [filters],
  );
  return (
    <section>
      <PageHeader title="Orders" />
      <FilterForm onApply={() => setFilters(draft)} onClear={() => (setDraft(NO_FILTERS), setFilters(NO_FILTERS))}>
        <TextFilter id="sourceId" label="Order id" placeholder="the shop’s order id" value={draft.sourceId} onInput={(sourceId) => setDraft({ ...draft, sourceId })} />
        <div class="filter">
          <label for="filter-status">Status</label>
          <select id="filter-status" value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value as Filters['status'] })}>
            <option value="">Any</option>
            {Object.entries(STATUS_NAMES).map(([value, name]) => (
              <option value={value}>{name}</option>
            ))}
          </select>
        </div>
      </FilterForm>
      <PagedTable
        label="Orders"
        load={load}
        version={filters}
        empty={filters === NO_FILTERS ? 'No orders yet. They appear as shops create them.' : 'No orders match these filters.'}
        columns={[
          { label: 'Order', render: (o) => <a href={`#/orders/${o.id}`}>{o.sourceId ?? `${o.id.slice(0, 8)}…`}</a> },
          { label: 'Amount', render: (o) => money(o.amount, o.currency), class: 'num' },
          { label: 'Returned', render: (o) => (o.returnedAmount ? money(o.returnedAmount, o.currency) : '—'), class: 'num' },
          { label: 'Status', render: (o) => <OrderStatusBadge status={o.status} /> },
          { label: 'Customer', render: (o) => (o.customerId ? <a href={`#/customers/${o.customerId}`}>{o.customerId.slice(0, 8)}…</a> : '—') },
          { label: 'Created', render: (o) => formatTime(o.createdAt), class: 'nowrap' },
        ]}
      />
    </section>
  );
}

const itemName = (i: { productId?: string | undefined; sku?: string | undefined }, index: number) => i.sku ?? i.productId ?? `item ${index + 1}`;

function OrderDetail({ id, can }: { id: string; can: PageProps['can'] }) {
  const order = useLoad(() => call('orders.get', { id }), [id]);
  const returns = useLoad(() => call('orders.listReturns', { id }), [id]);
  const o = order.value;
  const reload = () => (order.reload(), returns.reload());
  return (
    <section>
      <PageHeader title={o ? `Order ${o.sourceId ?? o.id.slice(0, 8)}` : 'Order'} back={{ href: '#/orders', label: 'Orders' }} />
      <ErrorNote error={order.error} />
      {o && (
        <>
          <Facts label="Order">
            <Fact label="Status">
              <OrderStatusBadge status={o.status} />
            </Fact>
            <Fact label="Amount">{money(o.amount, o.currency)}</Fact>
            <Fact label="Returned">{money(o.returnedAmount, o.currency)}</Fact>
            <Fact label="Customer">{o.customerId ? <a href={`#/customers/${o.customerId}`}>{o.customerId.slice(0, 8)}…</a> : '—'}</Fact>
            <Fact label="Created">{formatTime(o.createdAt)}</Fact>
            <Fact label="Id">
              <code>{o.id}</code>
            </Fact>
          </Facts>
          <div class="settings-section">
            <h2>Items</h2>
            {o.items.length === 0 ? (
              <p class="empty">The order has no items: return it by amount.</p>
            ) : (
              <table aria-label="Order items">
                <thead>
                  <tr>
                    <th>#</th>
                    <th>Item</th>
                    <th class="num">Quantity</th>
                    <th class="num">Price</th>
                    <th class="num">Line</th>
                  </tr>
                </thead>
                <tbody>
                  {o.items.map((item, index) => (
                    <tr>
                      <td>{index + 1}</td>
                      <td>
                        <code>{itemName(item, index)}</code>
                      </td>
                      <td class="num">{item.quantity}</td>
                      <td class="num">{money(item.price, o.currency)}</td>
                      <td class="num">{money(item.price * item.quantity, o.currency)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
          <div class="settings-section">
            <h2>Redemptions</h2>
            {o.redemptions.length === 0 ? (
              <p class="empty">No redemption names this order.</p>
            ) : (
              <table aria-label="Order redemptions">
                <thead>
                  <tr>
                    <th>Voucher</th>
                    <th class="num">Amount</th>
                    <th>Status</th>
                    <th>When</th>
                  </tr>
                </thead>
                <tbody>
                  {o.redemptions.map((r) => (
                    <tr>
                      <td>
                        <a href={`#/vouchers/${encodeURIComponent(r.voucherCode)}`}>
                          <code>{r.voucherCode}</code>
                        </a>
                      </td>
                      <td class="num">{money(r.amount, o.currency)}</td>
                      <td>{r.status === 'ROLLED_BACK' ? <Badge tone="bad">Rolled back</Badge> : <Badge tone="good">Succeeded</Badge>}</td>
                      <td class="nowrap">{formatTime(r.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
          <div class="settings-section">
            <h2>Returns</h2>
            <ErrorNote error={returns.error} />
            {returns.value && <ReturnsTable returns={returns.value.data} order={o} />}
            {can('orders:write') ? (
              o.status === 'RETURNED' || o.status === 'CANCELED' ? (
                <p class="muted">{o.status === 'RETURNED' ? 'The order was returned whole.' : 'A canceled order was returned whole when it was canceled.'}</p>
              ) : (
                <ReturnForm order={o} onReturned={reload} />
              )
            ) : (
              <Refused what="the return form (it needs orders:write)" />
            )}
          </div>
        </>
      )}
    </section>
  );
}

type OrderValue = OutputOf<'orders.get'>;
type ReturnValue = OutputOf<'orders.listReturns'>['data'][number];

function ReturnsTable({ returns, order }: { returns: ReturnValue[]; order: OrderValue }) {
  if (returns.length === 0) return <p class="empty">Nothing returned yet.</p>;
  const m = (amount: number) => money(amount, order.currency);
  return (
    <table aria-label="Order returns">
      <thead>
        <tr>
          <th>When</th>
          <th class="num">Amount</th>
          <th>Items</th>
          <th class="num">Discount</th>
          <th class="num">Gift credits</th>
          <th class="num">Points paid back</th>
          <th class="num">Points earned taken</th>
          <th>Reason</th>
        </tr>
      </thead>
      <tbody>
        {returns.map((r) => (
          <tr key={r.id}>
            <td class="nowrap">{formatTime(r.createdAt)}</td>
            <td class="num">{m(r.amount)}</td>
            <td>{r.items.length ? r.items.map((i) => `${i.quantity} × ${itemName(i, i.index)}`).join(', ') : <span class="muted">by amount</span>}</td>
            <td class="num">{m(r.reversals.discount)}</td>
            <td class="num">{m(r.reversals.giftCredits)}</td>
            <td class="num">{r.reversals.pointsPaid}</td>
            <td class="num">{r.reversals.pointsEarned}</td>
            <td>{r.reason ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function OrdersPage({ can, route }: PageProps) {
  if (!can('orders:read')) return <RefusedPage title="Orders" what="orders" />;
  return route[1] ? <OrderDetail key={route[1]} id={route[1]} can={can} /> : <OrderList />;
}
