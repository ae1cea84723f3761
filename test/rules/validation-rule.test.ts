// Validation rules over real HTTP and a real PostgreSQL: CRUD, malformed trees named by path, the evaluate op,
// deletion refused while a campaign lists the rule, tenancy and scopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

function expectProblem(response: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status, code });
}

const bigBasket = {
  all: [
    { field: 'order.amount', op: 'gte', value: 5000 },
    { any: [{ field: 'customer.segments', op: 'contains', value: '6f1c1f43-4a47-4a43-9d1c-2f6a1b1e0c11' }, { not: { field: 'order.currency', op: 'eq', value: 'USD' } }] },
  ],
};

describe('validation rules: happy path', () => {
  it('creates, reads, lists, updates and deletes a rule', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/validation-rules', {
      name: 'Big basket',
      conditions: bigBasket,
      errorMessage: 'Spend 50 EUR or more',
      applicableTo: { skus: ['shoe'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Big basket',
      conditions: bigBasket,
      errorMessage: 'Spend 50 EUR or more',
      applicableTo: { skus: ['shoe'] },
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    const id = created.body.id;
    expect((await api.get(`/api/v1/validation-rules/${id}`)).body).toEqual(created.body);

    const plain = await api.post('/api/v1/validation-rules', { name: 'EUR only', conditions: { field: 'order.currency', op: 'eq', value: 'EUR' } });
    expect(plain.status).toBe(201);
    expect(plain.body).not.toHaveProperty('errorMessage');
    expect(plain.body).not.toHaveProperty('applicableTo');

    const list = await api.get('/api/v1/validation-rules?limit=1');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([plain.body]);
    const second = await api.get(`/api/v1/validation-rules?limit=1&cursor=${encodeURIComponent(list.body.next)}`);
    expect(second.body.data).toEqual([created.body]);
    expect(second.body.next).toBeUndefined();

    const updated = await api.patch(`/api/v1/validation-rules/${id}`, { name: 'Bigger basket', errorMessage: null, applicableTo: null });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...created.body, name: 'Bigger basket', errorMessage: undefined, applicableTo: undefined, updatedAt: expect.any(String) });
    expect(updated.body).not.toHaveProperty('errorMessage');
    const reconditioned = await api.patch(`/api/v1/validation-rules/${id}`, { conditions: { field: 'order.amount', op: 'gt', value: 1 } });
    expect(reconditioned.body).toMatchObject({ name: 'Bigger basket', conditions: { field: 'order.amount', op: 'gt', value: 1 } });

    const deleted = await api.delete(`/api/v1/validation-rules/${id}`);
    expect(deleted.status).toBe(204);
    expect((await api.get(`/api/v1/validation-rules/${id}`)).status).toBe(404);
    expect((await api.delete(`/api/v1/validation-rules/${id}`)).status).toBe(404);
  });

  it('moves the workspace promotions version on every change (the engine rebuilds what reads rules)', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const version = async () =>
      (await service.pool.query<{ v: number }>('SELECT promotions_version AS v FROM workspaces WHERE workspace_id = $1', [workspaceId])).rows[0]!.v;
    const before = await version();
    const created = await api.post('/api/v1/validation-rules', { name: 'r', conditions: { field: 'order.amount', op: 'gt', value: 1 } });
    expect(await version()).toBe(before + 1);
    await api.patch(`/api/v1/validation-rules/${created.body.id}`, { name: 'r2' });
    expect(await version()).toBe(before + 2);
    await api.delete(`/api/v1/validation-rules/${created.body.id}`);
    expect(await version()).toBe(before + 3);
  });

  it('evaluates a rule against given facts and names the failing leaf', async () => {
    const { api } = await service.newWorkspace();
    const { body: rule } = await api.post('/api/v1/validation-rules', {
      name: 'Weekday shoes',
      conditions: { all: [{ field: 'order.items.quantity', op: 'gte', value: 2 }, { field: 'time.dayOfWeek', op: 'in', value: [1, 2, 3, 4, 5] }] },
      applicableTo: { skus: ['shoe'] },
    });
    const order = {
      amount: 9000,
      currency: 'EUR',
      items: [
        { sku: 'shoe', quantity: 1, price: 3000 },
        { sku: 'sock', quantity: 5, price: 1200 },
      ],
    };
    const oneShoe = await api.post(`/api/v1/validation-rules/${rule.id}/evaluate`, { order, time: { dayOfWeek: 2, hour: 10 } });
    expect(oneShoe.status).toBe(200);
    expect(oneShoe.body).toEqual({ ok: false, path: '/all/0', leaf: { field: 'order.items.quantity', op: 'gte', value: 2 } });

    const twoShoes = { ...order, items: [{ sku: 'shoe', quantity: 2, price: 3000 }] };
    expect((await api.post(`/api/v1/validation-rules/${rule.id}/evaluate`, { order: twoShoes, time: { dayOfWeek: 2, hour: 10 } })).body).toEqual({ ok: true });
    expect((await api.post(`/api/v1/validation-rules/${rule.id}/evaluate`, { order: twoShoes, time: { dayOfWeek: 0, hour: 10 } })).body).toMatchObject({
      ok: false,
      path: '/all/1',
    });
    // No time given: time.* fields are missing, so `in` does not hold.
    expect((await api.post(`/api/v1/validation-rules/${rule.id}/evaluate`, { order: twoShoes })).body).toMatchObject({ ok: false, path: '/all/1' });

    const { body: vip } = await api.post('/api/v1/validation-rules', {
      name: 'VIP',
      conditions: { any: [{ field: 'customer.metadata.tier', op: 'eq', value: 'gold' }, { field: 'customer.redemptions', op: 'lt', value: 1 }] },
    });
    const evaluate = (body: unknown) => api.post(`/api/v1/validation-rules/${vip.id}/evaluate`, body);
    expect((await evaluate({ customer: { metadata: { tier: 'gold' }, redemptions: 3 } })).body).toEqual({ ok: true });
    expect((await evaluate({ customer: { redemptions: 0 } })).body).toEqual({ ok: true });
    expect((await evaluate({ customer: { redemptions: 2 } })).body).toEqual({
      ok: false,
      path: '/any/0',
      leaf: { field: 'customer.metadata.tier', op: 'eq', value: 'gold' },
    });
    expect((await evaluate({})).body).toMatchObject({ ok: false, path: '/any/0' });
  });
});

describe('validation rules: malformed input', () => {
  const cases: Array<{ conditions: unknown; path: string; message?: RegExp }> = [
    { conditions: { all: [{ field: 'order.amount', op: 'gte', value: 1 }, { field: 'order.amount', op: 'bigger', value: 1 }] }, path: 'body.conditions.all.1.op' },
    { conditions: { any: [{ not: { field: 'order.colour', op: 'eq', value: 'red' } }] }, path: 'body.conditions.any.0.not.field', message: /unknown field/ },
    { conditions: { field: 'order.amount', op: 'gt', value: '100' }, path: 'body.conditions.value', message: /number/ },
    { conditions: { all: [{ field: 'customer.segments', op: 'in', value: [] }] }, path: 'body.conditions.all.0.value' },
    { conditions: { field: 'order.currency', op: 'contains', value: ['EUR'] }, path: 'body.conditions.value' },
    { conditions: { field: 'customer.email', op: 'exists', value: 'yes' }, path: 'body.conditions.value' },
    { conditions: { all: [] }, path: 'body.conditions.all' },
    { conditions: { any: [{ all: [{ field: 'order.amount', op: 'gt', value: 1 }, { any: [] }] }] }, path: 'body.conditions.any.0.all.1.any' },
    { conditions: { all: [{ field: 'order.amount', op: 'gt', value: 1, all: [] }] }, path: 'body.conditions.all.0', message: /exactly one/ },
    { conditions: { field: 'order.metadata.', op: 'exists' }, path: 'body.conditions.field' },
    { conditions: { all: [{ field: 'order.amount', op: 'gt', value: 1, extra: true }] }, path: 'body.conditions.all.0' },
    { conditions: { op: 'eq', value: 1 }, path: 'body.conditions.field' },
  ];

  for (const { conditions, path, message } of cases) {
    it(`refuses ${JSON.stringify(conditions)} naming ${path}`, async () => {
      const { api } = await service.newWorkspace();
      const res = await api.post('/api/v1/validation-rules', { name: 'bad', conditions });
      expectProblem(res, 400, 'invalid_request');
      const match = res.body.errors.find((e: { path: string }) => e.path === path);
      expect(match, JSON.stringify(res.body.errors)).toBeDefined();
      if (message) expect(match.message).toMatch(message);
    });
  }

  it('refuses a tree deeper than 10 levels, naming the first node too deep', async () => {
    const { api } = await service.newWorkspace();
    let tree: unknown = { field: 'order.amount', op: 'gt', value: 1 };
    for (let i = 0; i < 9; i++) tree = { not: tree };
    expect((await api.post('/api/v1/validation-rules', { name: 'ten levels', conditions: tree })).status).toBe(201);
    const res = await api.post('/api/v1/validation-rules', { name: 'eleven levels', conditions: { all: [tree] } });
    expectProblem(res, 400, 'invalid_request');
    const errorPaths = res.body.errors.map((e: { path: string }) => e.path);
    expect(errorPaths).toContain('body.conditions.all.0.not.not.not.not.not.not.not.not.not');
  });

  it('refuses a very deep tree without a 500', async () => {
    const { api } = await service.newWorkspace();
    const depth = 5000;
    const tree = '{"not":'.repeat(depth) + '{"field":"order.amount","op":"gt","value":1}' + '}'.repeat(depth);
    for (const path of ['/api/v1/validation-rules', '/api/rpc/validationRules.create']) {
      const res = await api.request('POST', path, { rawBody: `{"name":"deep","conditions":${tree}}`, headers: { 'content-type': 'application/json' } });
      expectProblem(res, 400, 'invalid_request');
    }
  });

  it('refuses more than 200 nodes', async () => {
    const { api } = await service.newWorkspace();
    const leaf = { field: 'order.amount', op: 'gt', value: 1 };
    expect((await api.post('/api/v1/validation-rules', { name: '200', conditions: { all: Array(199).fill(leaf) } })).status).toBe(201);
    const res = await api.post('/api/v1/validation-rules', { name: '201', conditions: { all: Array(200).fill(leaf) } });
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain('body.conditions');
  });

  it('refuses an applicableTo without products or SKUs, and a patch with a bad tree', async () => {
    const { api } = await service.newWorkspace();
    const leaf = { field: 'order.amount', op: 'gt', value: 1 };
    expectProblem(await api.post('/api/v1/validation-rules', { name: 'x', conditions: leaf, applicableTo: { skus: [] } }), 400, 'invalid_request');
    const { body: rule } = await api.post('/api/v1/validation-rules', { name: 'x', conditions: leaf });
    const res = await api.patch(`/api/v1/validation-rules/${rule.id}`, { conditions: { not: { field: 'order.amount', op: 'gt' } } });
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain('body.conditions.not.value');
  });

  it('names the bad node over RPC as well', async () => {
    const { api } = await service.newWorkspace();
    const res = await api.post('/api/rpc/validationRules.create', {
      name: 'bad',
      conditions: { all: [{ field: 'order.amount', op: 'gt', value: 1 }, { field: 'order.amount', op: 'bigger', value: 1 }] },
    });
    expectProblem(res, 400, 'invalid_request');
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain('conditions.all.1.op');
  });
});

describe('validation rules: conflicts, tenancy and scopes', () => {
  it('refuses to delete a rule a campaign or voucher lists, naming them', async () => {
    const { api } = await service.newWorkspace();
    const { body: rule } = await api.post('/api/v1/validation-rules', { name: 'used', conditions: { field: 'order.amount', op: 'gt', value: 1 } });
    const campaign = await api.post('/api/v1/campaigns', { name: 'Summer', type: 'DISCOUNT_COUPONS', validationRuleIds: [rule.id] });
    expect(campaign.status).toBe(201);
    const refused = await api.delete(`/api/v1/validation-rules/${rule.id}`);
    expectProblem(refused, 409, 'conflict');
    expect(refused.body.detail).toContain('Summer');
    expect(refused.body.detail).toContain(campaign.body.id);
    expect((await api.get(`/api/v1/validation-rules/${rule.id}`)).status).toBe(200);

    expect((await api.patch(`/api/v1/campaigns/${campaign.body.id}`, { validationRuleIds: [] })).status).toBe(200);
    expect((await api.delete(`/api/v1/validation-rules/${rule.id}`)).status).toBe(204);
  });

  it("answers 404 for another workspace's rule, and lists only its own", async () => {
    const mine = await service.newWorkspace();
    const theirs = await service.newWorkspace();
    const { body: rule } = await theirs.api.post('/api/v1/validation-rules', { name: 'theirs', conditions: { field: 'order.amount', op: 'gt', value: 1 } });
    expect((await mine.api.get(`/api/v1/validation-rules/${rule.id}`)).status).toBe(404);
    expect((await mine.api.patch(`/api/v1/validation-rules/${rule.id}`, { name: 'mine now' })).status).toBe(404);
    expect((await mine.api.post(`/api/v1/validation-rules/${rule.id}/evaluate`, {})).status).toBe(404);
    expect((await mine.api.delete(`/api/v1/validation-rules/${rule.id}`)).status).toBe(404);
    expect((await mine.api.get('/api/v1/validation-rules')).body).toEqual({ data: [] });
    expect((await theirs.api.get(`/api/v1/validation-rules/${rule.id}`)).body.name).toBe('theirs');
  });

  it('needs rules:write to change rules and rules:read to read or evaluate them', async () => {
    const owner = await service.newWorkspace();
    const { body: rule } = await owner.api.post('/api/v1/validation-rules', { name: 'r', conditions: { field: 'order.amount', op: 'gt', value: 1 } });
    const reader = await service.newWorkspace(['rules:read']);
    expectProblem(await reader.api.post('/api/v1/validation-rules', { name: 'r', conditions: { field: 'order.amount', op: 'gt', value: 1 } }), 403, 'forbidden');
    expect((await reader.api.get('/api/v1/validation-rules')).status).toBe(200);
    const other = await service.newWorkspace(['campaigns:read']);
    expectProblem(await other.api.get(`/api/v1/validation-rules/${rule.id}`), 403, 'forbidden');
    expectProblem(await other.api.post(`/api/v1/validation-rules/${rule.id}/evaluate`, {}), 403, 'forbidden');
  });
});
