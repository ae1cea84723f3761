// Keyset pagination end to end, through GET /customers over HTTP: walks both ways, limits, forged cursors, inserts.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, ApiResponse } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

interface Page {
  data: Array<{ id: string; createdAt: string }>;
  next?: string;
  prev?: string;
}

async function createCustomers(api: ApiClient, count: number, label: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await api.post('/api/v1/customers', { sourceId: `${label}-${i}` });
    expect(response.status).toBe(201);
  }
}

/** The list's true order, newest first by (created_at, id) at full microsecond precision. */
async function idsInListOrder(workspaceId: string): Promise<string[]> {
  const { rows } = await service.pool.query<{ id: string }>(
    'SELECT id FROM customers WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC',
    [workspaceId],
  );
  return rows.map((r) => r.id);
}

async function fetchPage(api: ApiClient, limit: number, cursor?: string): Promise<Page> {
  const query = `limit=${limit}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : '');
  const response: ApiResponse<Page> = await api.get(`/api/v1/customers?${query}`);
  expect(response.status).toBe(200);
  return response.body;
}

const ids = (page: Page) => page.data.map((c) => c.id);

function expectInvalidRequest(response: ApiResponse) {
  expect(response.status).toBe(400);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status: 400, code: 'invalid_request' });
}

describe('pagination over 45 customers', () => {
  let api: ApiClient;
  let expected: string[];
  const pages: Page[] = [];

  beforeAll(async () => {
    const workspace = await service.newWorkspace();
    api = workspace.api;
    await createCustomers(api, 45, 'walk');
    expected = await idsInListOrder(workspace.workspaceId);
    for (let cursor: string | undefined, first = true; first || cursor; first = false) {
      const page = await fetchPage(api, 10, cursor);
      pages.push(page);
      cursor = page.next;
    }
  });

  it('walks forward in pages of 10, 10, 10, 10, 5, newest first, none missing, none twice', () => {
    expect(pages.map((p) => p.data.length)).toEqual([10, 10, 10, 10, 5]);
    expect(pages[0]!.prev).toBeUndefined();
    expect(pages[4]!.next).toBeUndefined();
    for (const page of pages.slice(1)) expect(page.prev).toEqual(expect.any(String));
    for (const page of pages.slice(0, 4)) expect(page.next).toEqual(expect.any(String));
    const walked = pages.flatMap(ids);
    expect(new Set(walked).size).toBe(45);
    expect(walked).toEqual(expected);
    const stamps = pages.flatMap((p) => p.data.map((c) => Date.parse(c.createdAt)));
    expect(stamps).toEqual([...stamps].sort((a, b) => b - a));
  });

  it('walks back with prev from the last page to the first and meets the same pages', async () => {
    const back: Page[] = [];
    for (let cursor = pages[4]!.prev; cursor; ) {
      const page = await fetchPage(api, 10, cursor);
      back.push(page);
      cursor = page.prev;
    }
    expect(back.map(ids)).toEqual(pages.slice(0, 4).map(ids).reverse());
    for (const page of back) expect(page.next).toEqual(expect.any(String));
    expect(back[back.length - 1]!.prev).toBeUndefined();
    expect(ids(await fetchPage(api, 10, back[0]!.next))).toEqual(ids(pages[4]!));
  });

  it('serves 20 items when no limit is given', async () => {
    const response = await api.get('/api/v1/customers');
    expect(response.status).toBe(200);
    expect(response.body.data.map((c: { id: string }) => c.id)).toEqual(expected.slice(0, 20));
    expect(response.body.next).toEqual(expect.any(String));
    expect(response.body.prev).toBeUndefined();
  });

  it('refuses a limit outside 1..100 or not an integer', async () => {
    for (const limit of ['0', '101', '-1', 'abc', '1.5', '']) {
      expectInvalidRequest(await api.get(`/api/v1/customers?limit=${limit}`));
    }
    expect((await fetchPage(api, 100)).data).toHaveLength(45);
    expect((await fetchPage(api, 1)).data).toHaveLength(1);
  });

  it('refuses cursors the server did not issue for this list', async () => {
    const valid = pages[1]!.next!;
    const middle = Math.floor(valid.length / 2);
    const changed = valid.slice(0, middle) + (valid[middle] === 'A' ? 'B' : 'A') + valid.slice(middle + 1);
    await api.post('/api/v1/api-keys', { name: 'second', scopes: ['customers:read'] });
    const keys = await api.get('/api/v1/api-keys?limit=1');
    expect(keys.body.next).toEqual(expect.any(String));
    const forged = [randomBytes(48).toString('base64url'), changed, keys.body.next, valid + 'A', 'not a cursor!', '%%%'];
    for (const cursor of forged) {
      expectInvalidRequest(await api.get(`/api/v1/customers?limit=10&cursor=${encodeURIComponent(cursor)}`));
    }
    expect((await fetchPage(api, 10, valid)).data).toHaveLength(10);
  });
});

describe('pagination under writes', () => {
  it('keeps later pages in place when customers are created between fetches', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await createCustomers(api, 25, 'before');
    const expected = await idsInListOrder(workspaceId);

    const first = await fetchPage(api, 10);
    expect(ids(first)).toEqual(expected.slice(0, 10));
    await createCustomers(api, 5, 'between-1');
    const second = await fetchPage(api, 10, first.next);
    expect(ids(second)).toEqual(expected.slice(10, 20));
    await createCustomers(api, 5, 'between-2');
    const third = await fetchPage(api, 10, second.next);
    expect(ids(third)).toEqual(expected.slice(20, 25));
    expect(third.next).toBeUndefined();

    // Back from the second page: the same first page, which now has newer customers before it.
    const firstAgain = await fetchPage(api, 10, second.prev);
    expect(ids(firstAgain)).toEqual(expected.slice(0, 10));
    expect(firstAgain.prev).toEqual(expect.any(String));
    expect((await fetchPage(api, 10, firstAgain.prev)).data).toHaveLength(10);
  });

  it('continues after the row a cursor points at is deleted', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    await createCustomers(api, 15, 'gone');
    const expected = await idsInListOrder(workspaceId);
    const first = await fetchPage(api, 10);
    expect((await api.delete(`/api/v1/customers/${expected[9]}`)).status).toBe(204);
    expect(ids(await fetchPage(api, 10, first.next))).toEqual(expected.slice(10));
  });

  it('paginates a filtered list within its filter', async () => {
    const { api } = await service.newWorkspace();
    for (let i = 0; i < 5; i++) await api.post('/api/v1/customers', { email: 'Same@Example.com' });
    await api.post('/api/v1/customers', { email: 'other@example.com' });
    const first = await api.get('/api/v1/customers?limit=3&email=same%40example.com');
    expect(first.body.data).toHaveLength(3);
    const second = await api.get(`/api/v1/customers?limit=3&email=same%40example.com&cursor=${first.body.next}`);
    expect(second.body.data).toHaveLength(2);
    expect(second.body.next).toBeUndefined();
    expect(second.body.data.every((c: { email: string }) => c.email === 'Same@Example.com')).toBe(true);
  });
});
