// Orders over real HTTP and a real PostgreSQL: CRUD, status moves and their events, linked redemptions, tenancy.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

interface EventRow {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

async function orderEvents(workspaceId: string): Promise<EventRow[]> {
  const { rows } = await service.pool.query<EventRow>(
    `SELECT id, type, payload, created_at FROM events WHERE workspace_id = $1 AND type LIKE 'order.%' ORDER BY created_at, type`,
    [workspaceId],
  );
  return rows;
}

function expectProblem(response: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ type: expect.any(String), title: expect.any(String), status, code });
}

const items = [
  { sku: 'shoe', quantity: 1, price: 3000 },
  { productId: 'sock', quantity: 2, price: 500 },
];

async function createOrder(api: ApiClient, body: Record<string, unknown> = {}) {
  const res = await api.post('/api/v1/orders', { amount: 4000, currency: 'EUR', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; sourceId: string | null; status: string; customerId: string | null; updatedAt: string };
}

describe('orders: happy path', () => {
  it('creates, reads, lists and updates an order; a new customer sourceId creates the customer', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/orders', {
      sourceId: 'ORD-1',
      amount: 4000,
      currency: 'EUR',
      items,
      customer: { sourceId: 'shop-42', email: 'ada@example.com' },
      metadata: { channel: 'web' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      sourceId: 'ORD-1',
      status: 'CREATED',
      amount: 4000,
      currency: 'EUR',
      items,
      customerId: expect.any(String),
      metadata: { channel: 'web' },
      returnedAmount: 0,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    const customer = await api.get(`/api/v1/customers/${created.body.customerId}`);
    expect(customer.body).toMatchObject({ sourceId: 'shop-42', email: 'ada@example.com' });

    const got = await api.get(`/api/v1/orders/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...created.body, redemptions: [] });
    const list = await api.get('/api/v1/orders');
    expect(list.body).toEqual({ data: [created.body] });

    const updated = await api.patch(`/api/v1/orders/${created.body.id}`, { amount: 3500, items: [items[0]], metadata: { channel: 'app' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, status: 'CREATED', amount: 3500, items: [items[0]], metadata: { channel: 'app' } });
    expect(Date.parse(updated.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));
    const { redemptions, ...again } = (await api.get(`/api/v1/orders/${created.body.id}`)).body;
    expect(again).toEqual(updated.body);
    expect(redemptions).toEqual([]);
  });

  it('creates a bare order (no sourceId, items or customer), and one with an initial status', async () => {
    const { api } = await service.newWorkspace();
    const bare = await createOrder(api);
    expect(bare).toMatchObject({ sourceId: null, status: 'CREATED', items: [], customerId: null, metadata: {} });
    const paid = await createOrder(api, { status: 'PAID' });
    expect(paid.status).toBe('PAID');
  });

  it('names an existing customer by id, sourceId or email without creating another', async () => {
    const { api } = await service.newWorkspace();
    const customer = (await api.post('/api/v1/customers', { sourceId: 'known', email: 'Known@Example.com' })).body;
    for (const ref of [{ id: customer.id }, { sourceId: 'known' }, { email: 'known@example.com' }]) {
      expect((await createOrder(api, { customer: ref })).customerId).toBe(customer.id);
    }
    expect((await api.get('/api/v1/customers')).body.data).toHaveLength(1);
  });

  it('filters the list by status, customerId and sourceId, and pages newest first', async () => {
    const { api } = await service.newWorkspace();
    const a = await createOrder(api, { sourceId: 'A', customer: { sourceId: 'c-a' } });
    const b = await createOrder(api, { sourceId: 'B', status: 'PAID' });
    const c = await createOrder(api, { sourceId: 'C', customer: { sourceId: 'c-a' }, status: 'PAID' });
    const ids = (res: { body: { data: Array<{ id: string }> } }) => res.body.data.map((o) => o.id);
    expect(ids(await api.get('/api/v1/orders'))).toEqual([c.id, b.id, a.id]);
    expect(ids(await api.get('/api/v1/orders?status=PAID'))).toEqual([c.id, b.id]);
    expect(ids(await api.get(`/api/v1/orders?customerId=${a.customerId}`))).toEqual([c.id, a.id]);
    expect(ids(await api.get(`/api/v1/orders?customerId=${a.customerId}&status=CREATED`))).toEqual([a.id]);
    expect(ids(await api.get('/api/v1/orders?sourceId=B'))).toEqual([b.id]);
    expect(ids(await api.get('/api/v1/orders?status=FULFILLED'))).toEqual([]);

    const first = await api.get('/api/v1/orders?limit=2');
    expect(ids(first)).toEqual([c.id, b.id]);
    const second = await api.get(`/api/v1/orders?limit=2&cursor=${encodeURIComponent(first.body.next)}`);
    expect(ids(second)).toEqual([a.id]);
    expect(second.body.next).toBeUndefined();
    const back = await api.get(`/api/v1/orders?limit=2&cursor=${encodeURIComponent(second.body.prev)}`);
    expect(ids(back)).toEqual([c.id, b.id]);
  });

  it('makes each allowed status move and records its event with the payload', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const customer = (await api.post('/api/v1/customers', { sourceId: 'evc' })).body;
    const fulfilled = await createOrder(api, { sourceId: 'F-1', customer: { id: customer.id } });
    const canceledEarly = await createOrder(api);
    const canceledLate = await createOrder(api, { sourceId: 'C-2' });

    const move = async (id: string, status: string) => {
      const res = await api.patch(`/api/v1/orders/${id}`, { status });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.status).toBe(status);
    };
    await move(fulfilled.id, 'PAID');
    await move(fulfilled.id, 'FULFILLED');
    await move(canceledEarly.id, 'CANCELED');
    await move(canceledLate.id, 'PAID');
    await move(canceledLate.id, 'CANCELED');

    const events = (await orderEvents(workspaceId)).map((e) => ({ type: e.type, payload: e.payload }));
    expect(events).toEqual([
      {
        type: 'order.created',
        payload: { orderId: fulfilled.id, sourceId: 'F-1', customerId: customer.id, amount: 4000, currency: 'EUR', status: 'CREATED' },
      },
      { type: 'order.created', payload: { orderId: canceledEarly.id, amount: 4000, currency: 'EUR', status: 'CREATED' } },
      { type: 'order.created', payload: { orderId: canceledLate.id, sourceId: 'C-2', amount: 4000, currency: 'EUR', status: 'CREATED' } },
      { type: 'order.paid', payload: { orderId: fulfilled.id, sourceId: 'F-1', status: 'PAID' } },
      { type: 'order.fulfilled', payload: { orderId: fulfilled.id, sourceId: 'F-1', status: 'FULFILLED' } },
      { type: 'order.canceled', payload: { orderId: canceledEarly.id, status: 'CANCELED' } },
      { type: 'order.paid', payload: { orderId: canceledLate.id, sourceId: 'C-2', status: 'PAID' } },
      { type: 'order.canceled', payload: { orderId: canceledLate.id, sourceId: 'C-2', status: 'CANCELED' } },
    ]);
  });

  it('records, for an order created in a later status, the events of the moves that status stands for, in its transaction', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const paid = await createOrder(api, { sourceId: 'P-1', status: 'PAID' });
    const fulfilled = await createOrder(api, { status: 'FULFILLED' });
    const canceled = await createOrder(api, { sourceId: 'C-1', status: 'CANCELED' });
    // Written in one transaction: the same created_at, so listed by type.
    const events = await orderEvents(workspaceId);
    const of = (orderId: string) => events.filter((e) => e.payload.orderId === orderId).map((e) => ({ type: e.type, payload: e.payload }));
    expect(of(paid.id)).toEqual([
      { type: 'order.created', payload: { orderId: paid.id, sourceId: 'P-1', amount: 4000, currency: 'EUR', status: 'PAID' } },
      { type: 'order.paid', payload: { orderId: paid.id, sourceId: 'P-1', status: 'PAID' } },
    ]);
    expect(of(fulfilled.id)).toEqual([
      { type: 'order.created', payload: { orderId: fulfilled.id, amount: 4000, currency: 'EUR', status: 'FULFILLED' } },
      { type: 'order.fulfilled', payload: { orderId: fulfilled.id, status: 'FULFILLED' } },
      { type: 'order.paid', payload: { orderId: fulfilled.id, status: 'PAID' } },
    ]);
    expect(of(canceled.id)).toEqual([
      { type: 'order.canceled', payload: { orderId: canceled.id, sourceId: 'C-1', status: 'CANCELED' } },
      { type: 'order.created', payload: { orderId: canceled.id, sourceId: 'C-1', amount: 4000, currency: 'EUR', status: 'CANCELED' } },
    ]);
    // One transaction wrote the order and all of its events (now() is the transaction's start).
    const { rows } = await service.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events e JOIN orders o ON o.id::text = e.payload->>'orderId' WHERE e.workspace_id = $1 AND e.created_at <> o.created_at`,
      [workspaceId],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('treats the current status again as a no-op 200 without an event, still applying the other fields', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const order = await createOrder(api, { status: 'PAID' });
    const same = await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(order);
    const withMetadata = await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID', metadata: { note: 'x' } });
    expect(withMetadata.body).toMatchObject({ status: 'PAID', metadata: { note: 'x' } });
    expect((await api.patch(`/api/v1/orders/${order.id}`, {})).body).toEqual(withMetadata.body);
    // The order was created paid: its creation recorded order.paid; setting PAID again records nothing more.
    expect((await orderEvents(workspaceId)).map((e) => e.type)).toEqual(['order.created', 'order.paid']);
  });

  it('writes each event in the transaction of its change', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const order = await createOrder(api, { customer: { sourceId: 'tx-customer' } });
    await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' });
    const [created, paid] = await orderEvents(workspaceId);
    // now() is the transaction's start: equal timestamps (to the microsecond) mean one transaction wrote both rows.
    const { rows } = await service.pool.query<{ created: boolean; paid: boolean; customer: boolean }>(
      `SELECT (SELECT created_at FROM events WHERE id = $1) = o.created_at AS created,
              (SELECT created_at FROM events WHERE id = $2) = o.updated_at AS paid,
              (SELECT created_at FROM events WHERE type = 'customer.created' AND workspace_id = $4) = o.created_at AS customer
       FROM orders o WHERE o.id = $3`,
      [created!.id, paid!.id, order.id, workspaceId],
    );
    expect(rows[0]).toEqual({ created: true, paid: true, customer: true });
  });

  it('moves an order once when 10 requests pay it at the same time', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const order = await createOrder(api);
    const results = await Promise.all(Array.from({ length: 10 }, () => api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect((await orderEvents(workspaceId)).map((e) => e.type)).toEqual(['order.created', 'order.paid']);
  });

  it("lists the redemptions made for the order's sourceId or id, newest first", async () => {
    const { api } = await service.newWorkspace();
    const campaign = (await api.post('/api/v1/campaigns', { name: 'C', type: 'DISCOUNT_COUPONS', currency: 'EUR' })).body;
    for (const code of ['TEN-OFF', 'FIVE-OFF', 'OTHER']) {
      const amountOff = code === 'TEN-OFF' ? 1000 : 500;
      expect((await api.post('/api/v1/vouchers', { code, campaignId: campaign.id, discount: { type: 'AMOUNT', amountOff } })).status).toBe(201);
    }
    const order = await createOrder(api, { sourceId: 'SHOP-1001' });
    const redeem = (code: string, orderId: string) =>
      api.post(`/api/v1/vouchers/${code}/redemption`, { order: { id: orderId, amount: 4000, currency: 'EUR' } });
    const first = await redeem('TEN-OFF', 'SHOP-1001');
    expect(first.body.ok).toBe(true);
    const second = await redeem('FIVE-OFF', order.id);
    expect(second.body.ok).toBe(true);
    expect((await redeem('OTHER', 'SHOP-1002')).body.ok).toBe(true);

    const got = await api.get(`/api/v1/orders/${order.id}`);
    expect(got.body.redemptions).toEqual([
      { id: second.body.redemption.id, voucherCode: 'FIVE-OFF', amount: 500, status: 'SUCCEEDED', createdAt: expect.stringMatching(/Z$/) },
      { id: first.body.redemption.id, voucherCode: 'TEN-OFF', amount: 1000, status: 'SUCCEEDED', createdAt: expect.stringMatching(/Z$/) },
    ]);

    expect((await api.post(`/api/v1/redemptions/${first.body.redemption.id}/rollback`, {})).body.ok).toBe(true);
    const afterRollback = await api.get(`/api/v1/orders/${order.id}`);
    expect(afterRollback.body.redemptions.map((r: { status: string }) => r.status)).toEqual(['SUCCEEDED', 'ROLLED_BACK']);
  });
});

describe('orders: errors', () => {
  it('refuses every other status move with 409 naming both statuses, and changes nothing', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const at = async (status: string) => {
      const order = await createOrder(api);
      if (status === 'CREATED') return order;
      if (status === 'FULFILLED') await api.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' });
      const moved = await api.patch(`/api/v1/orders/${order.id}`, { status });
      expect(moved.status).toBe(200);
      return moved.body;
    };
    const refused: Array<[string, string]> = [
      ['CREATED', 'FULFILLED'],
      ['PAID', 'CREATED'],
      ['CANCELED', 'CREATED'],
      ['CANCELED', 'PAID'],
      ['CANCELED', 'FULFILLED'],
      ['FULFILLED', 'CREATED'],
      ['FULFILLED', 'PAID'],
      ['FULFILLED', 'CANCELED'],
    ];
    for (const [from, to] of refused) {
      const order = await at(from);
      const eventsBefore = (await orderEvents(workspaceId)).length;
      const res = await api.patch(`/api/v1/orders/${order.id}`, { status: to, metadata: { changed: true } });
      expectProblem(res, 409, 'conflict');
      expect(res.body.detail).toContain(from);
      expect(res.body.detail).toContain(to);
      const { redemptions: _, ...after } = (await api.get(`/api/v1/orders/${order.id}`)).body;
      expect(after).toEqual(order);
      expect(await orderEvents(workspaceId)).toHaveLength(eventsBefore);
    }
  });

  it('answers 409 for a sourceId that exists, and records no second event', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await createOrder(api, { sourceId: 'DUP' });
    const duplicate = await api.post('/api/v1/orders', { sourceId: 'DUP', amount: 1, currency: 'EUR', customer: { sourceId: 'new-one' } });
    expectProblem(duplicate, 409, 'conflict');
    expect(duplicate.body.detail).toContain('DUP');
    expect(await orderEvents(workspaceId)).toHaveLength(1);
    // The refused order's customer was rolled back with it.
    expect((await api.get('/api/v1/customers?sourceId=new-one')).body.data).toEqual([]);
  });

  it('refuses malformed bodies, queries and ids with 400, never 500', async () => {
    const { api } = await service.newWorkspace();
    const order = await createOrder(api);
    const bad: Array<Record<string, unknown>> = [
      {},
      { amount: 100 },
      { currency: 'EUR' },
      { amount: -1, currency: 'EUR' },
      { amount: 10.5, currency: 'EUR' },
      { amount: '100', currency: 'EUR' },
      { amount: Number.MAX_SAFE_INTEGER + 2, currency: 'EUR' },
      { amount: 100, currency: 'eur' },
      { amount: 100, currency: 'EURO' },
      { amount: 100, currency: 'EUR', status: 'SHIPPED' },
      { amount: 100, currency: 'EUR', sourceId: '' },
      { amount: 100, currency: 'EUR', sourceId: 42 },
      { amount: 100, currency: 'EUR', items: [{ sku: 'x', quantity: 0, price: 1 }] },
      { amount: 100, currency: 'EUR', items: [{ sku: 'x', quantity: 1, price: -1 }] },
      { amount: 100, currency: 'EUR', items: 'x' },
      { amount: 100, currency: 'EUR', metadata: 'x' },
      { amount: 100, currency: 'EUR', customer: { id: 'not-a-uuid' } },
      { amount: 100, currency: 'EUR', customer: { email: 'nope' } },
      { amount: 100, currency: 'EUR', customer: {} },
      { amount: 100, currency: 'EUR', sourceId: 'nul\u0000' },
    ];
    for (const body of bad) expectProblem(await api.post('/api/v1/orders', body), 400, 'invalid_request');
    for (const patch of [{ status: 'SHIPPED' }, { amount: -5 }, { items: [{ quantity: 1 }] }, { metadata: [] }, { amount: null }]) {
      expectProblem(await api.patch(`/api/v1/orders/${order.id}`, patch), 400, 'invalid_request');
    }
    for (const query of ['status=SHIPPED', 'customerId=nope', 'limit=0', 'limit=101', 'cursor=forged', 'sourceId=']) {
      expectProblem(await api.get(`/api/v1/orders?${query}`), 400, 'invalid_request');
    }
    expectProblem(await api.get('/api/v1/orders/not-a-uuid'), 400, 'invalid_request');
    expectProblem(await api.patch('/api/v1/orders/not-a-uuid', { status: 'PAID' }), 400, 'invalid_request');
    expectProblem(await api.request('POST', '/api/v1/orders', { rawBody: '{"amount": 1,', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request');
  });

  it('answers 404 for unknown orders and for a customer id or email that is not in the workspace', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const id = randomUUID();
    expectProblem(await api.get(`/api/v1/orders/${id}`), 404, 'not_found');
    expectProblem(await api.patch(`/api/v1/orders/${id}`, { status: 'PAID' }), 404, 'not_found');
    expectProblem(await api.post('/api/v1/orders', { amount: 1, currency: 'EUR', customer: { id: randomUUID() } }), 404, 'not_found');
    expectProblem(await api.post('/api/v1/orders', { amount: 1, currency: 'EUR', customer: { email: 'nobody@example.com' } }), 404, 'not_found');
    expect(await orderEvents(workspaceId)).toEqual([]);
  });
});

describe('orders: security', () => {
  it("answers 404 for another workspace's order, exactly as for a random id, and never links its redemptions", async () => {
    const owner = await service.newWorkspace();
    const stranger = await service.newWorkspace();
    const foreign = await createOrder(owner.api, { sourceId: 'SHARED-1' });
    const random = randomUUID();
    const pairs = [
      [stranger.api.get(`/api/v1/orders/${foreign.id}`), stranger.api.get(`/api/v1/orders/${random}`)],
      [stranger.api.patch(`/api/v1/orders/${foreign.id}`, { status: 'PAID' }), stranger.api.patch(`/api/v1/orders/${random}`, { status: 'PAID' })],
    ];
    for (const [foreignCall, randomCall] of pairs) {
      const [a, b] = await Promise.all([foreignCall!, randomCall!]);
      expectProblem(a, 404, 'not_found');
      expect(a.body).toEqual(b.body);
    }
    expect((await owner.api.get(`/api/v1/orders/${foreign.id}`)).body.status).toBe('CREATED');
    expect((await stranger.api.get('/api/v1/orders')).body).toEqual({ data: [] });
    expect((await stranger.api.get('/api/v1/orders?sourceId=SHARED-1')).body).toEqual({ data: [] });

    // The same sourceId in the stranger's workspace is its own order; its redemptions stay with it.
    const theirs = await createOrder(stranger.api, { sourceId: 'SHARED-1' });
    await stranger.api.post('/api/v1/vouchers', { code: 'STRANGER', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR' });
    const redeemed = await stranger.api.post('/api/v1/vouchers/STRANGER/redemption', { order: { id: 'SHARED-1', amount: 4000, currency: 'EUR' } });
    expect(redeemed.body.ok).toBe(true);
    expect((await stranger.api.get(`/api/v1/orders/${theirs.id}`)).body.redemptions).toHaveLength(1);
    expect((await owner.api.get(`/api/v1/orders/${foreign.id}`)).body.redemptions).toEqual([]);
    // A customer of another workspace cannot be named by id.
    const foreignCustomer = (await owner.api.post('/api/v1/customers', { sourceId: 'theirs' })).body;
    expectProblem(await stranger.api.post('/api/v1/orders', { amount: 1, currency: 'EUR', customer: { id: foreignCustomer.id } }), 404, 'not_found');
  });

  it('lets an orders:read key list and read but not write', async () => {
    const writer = await service.newWorkspace();
    const order = await createOrder(writer.api);
    const { key } = await service.newWorkspace(['orders:read']);
    const reader = service.api(key);
    expectProblem(await reader.post('/api/v1/orders', { amount: 1, currency: 'EUR' }), 403, 'forbidden');
    expectProblem(await reader.post('/api/v1/orders', { amount: -1 }), 403, 'forbidden');
    expectProblem(await reader.patch(`/api/v1/orders/${order.id}`, { status: 'PAID' }), 403, 'forbidden');
    expect((await reader.get('/api/v1/orders')).status).toBe(200);
    expectProblem(await reader.get(`/api/v1/orders/${order.id}`), 404, 'not_found');
  });

  it('refuses keys of other groups and requests without a key', async () => {
    const { api } = await service.newWorkspace(['redemptions:write', 'customers:write']);
    expectProblem(await api.get('/api/v1/orders'), 403, 'forbidden');
    expectProblem(await api.post('/api/v1/orders', { amount: 1, currency: 'EUR' }), 403, 'forbidden');
    const anonymous = service.api();
    expectProblem(await anonymous.get('/api/v1/orders'), 401, 'unauthorized');
    expectProblem(await anonymous.post('/api/v1/orders', { amount: 1, currency: 'EUR' }), 401, 'unauthorized');
  });
});
