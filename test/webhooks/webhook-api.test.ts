// The webhooks and events API over real HTTP and PostgreSQL: endpoints, the secret shown once and sealed at rest,
// rotation, delivery and attempt lists, the event log, validation, scopes and tenancy. No worker runs here.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/domains/events/index.js';
import { defaultServiceSettings } from '../../src/composition.js';
import { openSecret } from '../../src/domains/webhooks/webhook-secret.js';
import { startTestService, type TestService } from '../support/service.js';

const secretsKey = randomBytes(32);
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ settings: defaultServiceSettings({ webhooks: { secretsKey, allowPrivateTargets: true, timeoutMs: 1_000, retryScheduleMs: [1_000] } }) });
});
afterAll(async () => service?.close());

const URL_A = 'http://127.0.0.1:9/a';

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe(code);
}

describe('webhook endpoints: happy path', () => {
  it('creates an endpoint showing its secret once, reads, lists, updates and deletes it', async () => {
    const { api } = await service.newWorkspace();
    const created = await api.post('/api/v1/webhooks', { url: URL_A, events: ['customer.created', 'customer.created'], description: 'crm' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      url: URL_A,
      events: ['customer.created'],
      description: 'crm',
      active: true,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      secretRotatedAt: null,
      previousSecretExpiresAt: null,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    const { secret, ...endpoint } = created.body;
    const got = await api.get(`/api/v1/webhooks/${endpoint.id}`);
    expect(got.body).toEqual({ ...endpoint, deliveries: [] });
    expect((await api.get('/api/v1/webhooks')).body).toEqual({ data: [endpoint] });
    expect(JSON.stringify((await api.get('/api/v1/webhooks')).body)).not.toContain(secret);

    const updated = await api.patch(`/api/v1/webhooks/${endpoint.id}`, { events: '*', description: null, active: false });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: endpoint.id, url: URL_A, events: '*', description: null, active: false });
    expect((await api.delete(`/api/v1/webhooks/${endpoint.id}`)).status).toBe(204);
    expectProblem(await api.get(`/api/v1/webhooks/${endpoint.id}`), 404, 'not_found');
  });

  it('keeps the secret sealed at rest, bound to its endpoint', async () => {
    const { api } = await service.newWorkspace();
    const a = (await api.post('/api/v1/webhooks', { url: URL_A, events: '*' })).body;
    const b = (await api.post('/api/v1/webhooks', { url: URL_A, events: '*' })).body;
    const { rows } = await service.pool.query<{ id: string; secret_ciphertext: Buffer }>(
      'SELECT id, secret_ciphertext FROM webhook_endpoints WHERE id = ANY($1::uuid[])',
      [[a.id, b.id]],
    );
    const sealed = new Map(rows.map((r) => [r.id, r.secret_ciphertext]));
    expect(sealed.get(a.id)!.toString('latin1')).not.toContain(a.secret);
    expect(sealed.get(a.id)!.toString('hex')).not.toContain(Buffer.from(a.secret).toString('hex'));
    expect(openSecret(secretsKey, a.id, sealed.get(a.id)!)).toBe(a.secret);
    expect(() => openSecret(secretsKey, b.id, sealed.get(a.id)!)).toThrow();
    expect(() => openSecret(randomBytes(32), a.id, sealed.get(a.id)!)).toThrow();
  });

  it('rotates the secret with an overlap, or revokes the previous one at once', async () => {
    const { api } = await service.newWorkspace();
    const endpoint = (await api.post('/api/v1/webhooks', { url: URL_A, events: '*' })).body;
    const rotated = await api.post(`/api/v1/webhooks/${endpoint.id}/secret/rotate`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(86_000_000);
    expect(rotated.body.secretRotatedAt).toEqual(expect.stringMatching(/Z$/));
    const { rows } = await service.pool.query<{ previous_secret_ciphertext: Buffer }>(
      'SELECT previous_secret_ciphertext FROM webhook_endpoints WHERE id = $1',
      [endpoint.id],
    );
    expect(openSecret(secretsKey, endpoint.id, rows[0]!.previous_secret_ciphertext)).toBe(endpoint.secret);
    const revoked = await api.post(`/api/v1/webhooks/${endpoint.id}/secret/rotate`, { overlapSeconds: 0 });
    expect(revoked.body.previousSecretExpiresAt).toBeNull();
    expect((await api.get(`/api/v1/webhooks/${endpoint.id}`)).body).not.toHaveProperty('secret');
  });

  it('lists deliveries filtered by status and event, with their attempts, and pages through them', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const endpoint = (await api.post('/api/v1/webhooks', { url: URL_A, events: '*' })).body;
    const events = [];
    for (let i = 0; i < 3; i++) events.push(await recordEvent(service.pool, workspaceId, 'customer.created', { customerId: randomUUID() }));
    for (const id of events) expect((await api.post(`/api/v1/webhooks/${endpoint.id}/events/${id}/replay`)).status).toBe(200);
    const [first] = events;
    await service.pool.query(`UPDATE webhook_deliveries SET status = 'dead' WHERE event_id = $1`, [first]);

    const page1 = await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries?limit=2`);
    expect(page1.body.data).toHaveLength(2);
    const page2 = await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries?limit=2&cursor=${page1.body.next}`);
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.prev).toBeDefined();
    const all = [...page1.body.data, ...page2.body.data];
    expect(all.map((d: any) => d.eventId).sort()).toEqual([...events].sort());
    expect(all.every((d: any) => d.webhookId === endpoint.id && d.eventType === 'customer.created')).toBe(true);

    const dead = await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries?status=dead`);
    expect(dead.body.data.map((d: any) => d.eventId)).toEqual([first]);
    const pending = await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries?status=pending`);
    expect(pending.body.data).toHaveLength(2);
    const one = await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${dead.body.data[0].id}`);
    expect(one.body).toEqual(dead.body.data[0]);
    expect((await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${one.body.id}/attempts`)).body).toEqual({ data: [] });
    expectProblem(await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries?status=lost`), 400, 'invalid_request');
    expectProblem(await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries?cursor=bogus`), 400, 'invalid_request');
  });
});

describe('events', () => {
  it('lists the recorded events newest first, filtered by type, and reads one', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const customer = await api.post('/api/v1/customers', { sourceId: 'ev-1', email: 'ev@example.com' });
    const redeemed = await recordEvent(service.pool, workspaceId, 'voucher.redeemed', { redemptionId: randomUUID(), voucherCode: 'A', amount: 5 });
    const list = await api.get('/api/v1/events');
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: any) => e.type)).toEqual(['voucher.redeemed', 'customer.created']);
    const created = list.body.data[1];
    expect(created).toEqual({
      id: expect.any(String),
      type: 'customer.created',
      payload: { customerId: customer.body.id, sourceId: 'ev-1', email: 'ev@example.com' },
      createdAt: expect.stringMatching(/Z$/),
    });
    expect((await api.get(`/api/v1/events/${created.id}`)).body).toEqual(created);
    expect((await api.get('/api/v1/events?type=voucher.redeemed')).body.data.map((e: any) => e.id)).toEqual([redeemed]);
    const paged = await api.get('/api/v1/events?limit=1');
    expect(paged.body.next).toBeDefined();
    expect((await api.get(`/api/v1/events?limit=1&cursor=${paged.body.next}`)).body.data[0].id).toBe(created.id);
    expectProblem(await api.get(`/api/v1/events/${randomUUID()}`), 404, 'not_found');
  });
});

describe('webhooks: errors', () => {
  it('refuses invalid bodies with 400 naming the field', async () => {
    const { api } = await service.newWorkspace();
    for (const body of [
      { url: 'ftp://example.com/x', events: '*' },
      { url: 'not a url', events: '*' },
      { url: URL_A, events: [] },
      { url: URL_A, events: ['no.such.type'] },
      { url: URL_A, events: 'customer.created' },
      { url: URL_A },
      { url: 'http://user:pass@127.0.0.1/x', events: '*' },
    ]) {
      const res = await api.post('/api/v1/webhooks', body);
      expectProblem(res, 400, 'invalid_request');
      expect(JSON.stringify(res.body.errors)).toMatch(/url|events/);
    }
    const endpoint = (await api.post('/api/v1/webhooks', { url: URL_A, events: '*' })).body;
    expectProblem(await api.post(`/api/v1/webhooks/${endpoint.id}/secret/rotate`, { overlapSeconds: -1 }), 400, 'invalid_request');
    expectProblem(await api.patch(`/api/v1/webhooks/${endpoint.id}`, { url: 'gopher://x' }), 400, 'invalid_request');
  });

  it('answers 404 for unknown endpoints, deliveries and events, and 409 for a replay to an inactive endpoint', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const endpoint = (await api.post('/api/v1/webhooks', { url: URL_A, events: '*', active: false })).body;
    const missing = randomUUID();
    expectProblem(await api.patch(`/api/v1/webhooks/${missing}`, { active: true }), 404, 'not_found');
    expectProblem(await api.delete(`/api/v1/webhooks/${missing}`), 404, 'not_found');
    expectProblem(await api.post(`/api/v1/webhooks/${missing}/secret/rotate`, {}), 404, 'not_found');
    expectProblem(await api.get(`/api/v1/webhooks/${missing}/deliveries`), 404, 'not_found');
    expectProblem(await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${missing}`), 404, 'not_found');
    expectProblem(await api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${missing}/attempts`), 404, 'not_found');
    const event = await recordEvent(service.pool, workspaceId, 'customer.created', { customerId: randomUUID() });
    expectProblem(await api.post(`/api/v1/webhooks/${endpoint.id}/events/${event}/replay`), 409, 'conflict');
    await api.patch(`/api/v1/webhooks/${endpoint.id}`, { active: true });
    expectProblem(await api.post(`/api/v1/webhooks/${endpoint.id}/events/${missing}/replay`), 404, 'not_found');
    expectProblem(await api.post(`/api/v1/webhooks/${endpoint.id}/deliveries/${missing}/replay`), 404, 'not_found');
  });
});

describe('webhooks: security', () => {
  it('needs the webhooks and events scopes', async () => {
    const reader = await service.newWorkspace(['webhooks:read']);
    expectProblem(await reader.api.post('/api/v1/webhooks', { url: URL_A, events: '*' }), 403, 'forbidden');
    expect((await reader.api.get('/api/v1/webhooks')).status).toBe(200);
    expectProblem(await reader.api.get('/api/v1/events'), 403, 'forbidden');
    const events = await service.newWorkspace(['events:read']);
    expect((await events.api.get('/api/v1/events')).status).toBe(200);
    expectProblem(await events.api.get('/api/v1/webhooks'), 403, 'forbidden');
    expectProblem(await service.api().get('/api/v1/webhooks'), 401, 'unauthorized');
  });

  it("answers 404 for another workspace's endpoints, deliveries and events", async () => {
    const owner = await service.newWorkspace();
    const other = await service.newWorkspace();
    const endpoint = (await owner.api.post('/api/v1/webhooks', { url: URL_A, events: '*' })).body;
    const event = await recordEvent(service.pool, owner.workspaceId, 'customer.created', { customerId: randomUUID() });
    const delivery = (await owner.api.post(`/api/v1/webhooks/${endpoint.id}/events/${event}/replay`)).body;
    const ownEndpoint = (await other.api.post('/api/v1/webhooks', { url: URL_A, events: '*' })).body;

    expectProblem(await other.api.get(`/api/v1/webhooks/${endpoint.id}`), 404, 'not_found');
    expectProblem(await other.api.patch(`/api/v1/webhooks/${endpoint.id}`, { active: false }), 404, 'not_found');
    expectProblem(await other.api.post(`/api/v1/webhooks/${endpoint.id}/secret/rotate`, {}), 404, 'not_found');
    expectProblem(await other.api.delete(`/api/v1/webhooks/${endpoint.id}`), 404, 'not_found');
    expectProblem(await other.api.get(`/api/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}`), 404, 'not_found');
    expectProblem(await other.api.post(`/api/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`), 404, 'not_found');
    expectProblem(await other.api.get(`/api/v1/events/${event}`), 404, 'not_found');
    // Its own endpoint cannot reach the other workspace's event or delivery either.
    expectProblem(await other.api.post(`/api/v1/webhooks/${ownEndpoint.id}/events/${event}/replay`), 404, 'not_found');
    expectProblem(await other.api.get(`/api/v1/webhooks/${ownEndpoint.id}/deliveries/${delivery.id}`), 404, 'not_found');
    // The other workspace sees only the event of its own endpoint's creation.
    expect((await other.api.get('/api/v1/events')).body.data.map((e: any) => e.type)).toEqual(['webhook.created']);
    expect((await other.api.get('/api/v1/webhooks')).body.data.map((w: any) => w.id)).toEqual([ownEndpoint.id]);
    expect((await owner.api.get(`/api/v1/webhooks/${endpoint.id}`)).status).toBe(200);
  });
});

describe('settings per service', () => {
  it('keeps each service’s webhook settings its own: two services in one process, private targets allowed in one only', async () => {
    // The settings travel in each service's handler dependencies (composition.ts), so a second service made with
    // private targets refused and a key of its own leaves the first as it was.
    const strict = await startTestService({ database: service.db, settings: defaultServiceSettings({ webhooks: { allowPrivateTargets: false } }) });
    try {
      const workspace = await service.newWorkspace();
      const refused = await strict.api(workspace.key).post('/api/v1/webhooks', { url: URL_A, events: ['customer.created'] });
      expectProblem(refused, 400, 'invalid_request');
      const created = await workspace.api.post('/api/v1/webhooks', { url: URL_A, events: ['customer.created'] });
      expect(created.status).toBe(201);
      // Each service seals with its own key: the first's secret opens with the first's key only.
      const { rows } = await service.pool.query<{ sealed: Buffer }>('SELECT secret_ciphertext AS sealed FROM webhook_endpoints WHERE id = $1', [created.body.id]);
      expect(openSecret(secretsKey, created.body.id, rows[0]!.sealed)).toBe(created.body.secret);
      expect(() => openSecret(strict.service.settings.webhooks.secretsKey, created.body.id, rows[0]!.sealed)).toThrow();
    } finally {
      await strict.close();
    }
  });
});
