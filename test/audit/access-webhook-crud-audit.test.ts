// The writes of API keys, webhooks, customers, orders, publications, segments and promotion tiers over real HTTP and
// PostgreSQL: each success commits exactly one audit entry and its events in one transaction (one xid), a failure
// commits neither (nor the change), and no secret handed to a client reaches an entry or an event.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultServiceSettings } from '../../src/composition.js';
import type { ApiResponse } from '../support/api-client.js';
import type { AuditEntryRow } from '../support/audit-entries.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ settings: defaultServiceSettings({ webhooks: { allowPrivateTargets: true, timeoutMs: 1_000, retryScheduleMs: [1_000] } }) });
});
afterAll(async () => service?.close());

const URL_A = 'http://127.0.0.1:9/a';
const URL_B = 'http://127.0.0.1:9/b';

interface Entry extends AuditEntryRow {
  id: string;
  xid: string;
}

interface EventRow {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  xid: string;
}

/** A fresh workspace whose committed entries and events are read back call by call. */
async function auditedWorkspace() {
  const { api, key, workspaceId } = await service.newWorkspace();
  const { rows } = await service.pool.query<{ id: string }>('SELECT id FROM api_keys WHERE prefix = $1', [key.split('_')[1]]);
  const keyId = rows[0]!.id;
  const seen = new Set<string>();

  /** What was committed since the previous call. */
  async function written(): Promise<{ entries: Entry[]; events: EventRow[] }> {
    const entries = await service.pool.query<Entry>(
      `SELECT id, operation, resource_type, resource_id, changes, actor_type, actor_id, xmin::text AS xid
       FROM audit_entries WHERE workspace_id = $1 ORDER BY created_at, id`,
      [workspaceId],
    );
    const events = await service.pool.query<EventRow>(
      'SELECT id, type, payload, xmin::text AS xid FROM events WHERE workspace_id = $1 ORDER BY created_at, id',
      [workspaceId],
    );
    const fresh = <T extends { id: string }>(list: T[]) => list.filter((row) => !seen.has(row.id));
    const result = { entries: fresh(entries.rows), events: fresh(events.rows) };
    for (const row of [...result.entries, ...result.events]) seen.add(row.id);
    return result;
  }

  /** The call succeeded with exactly one entry by this key and exactly these events, all in one transaction. */
  async function expectOne(
    res: ApiResponse,
    entry: { operation: string; resourceType: string; resourceId: string },
    events: Array<{ type: string; payload: Record<string, unknown> }>,
  ): Promise<Entry> {
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    const w = await written();
    expect(w.entries, entry.operation).toHaveLength(1);
    const [one] = w.entries;
    expect(one).toMatchObject({
      operation: entry.operation,
      resource_type: entry.resourceType,
      resource_id: entry.resourceId,
      actor_type: 'api_key',
      actor_id: keyId,
    });
    const byContent = (a: { type: string; payload: unknown }, b: { type: string; payload: unknown }) =>
      JSON.stringify([a.type, a.payload]).localeCompare(JSON.stringify([b.type, b.payload]));
    expect(w.events.map(({ type, payload }) => ({ type, payload })).sort(byContent), entry.operation).toEqual([...events].sort(byContent));
    expect(new Set([one!.xid, ...w.events.map((e) => e.xid)]).size, 'entry and events in one transaction').toBe(1);
    return one!;
  }

  /** The call failed with this status and committed neither an entry nor an event. */
  async function expectNothing(res: ApiResponse, status: number): Promise<void> {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(await written()).toEqual({ entries: [], events: [] });
  }

  /** For set-up calls made through other domains: their writes are not this test's subject. */
  async function skip(): Promise<void> {
    await written();
  }

  return { api, workspaceId, expectOne, expectNothing, skip };
}

describe('API keys', () => {
  it('records a creation without its key and a revocation, each with its event', async () => {
    const w = await auditedWorkspace();
    const res = await w.api.post('/api/v1/api-keys', { name: 'ci', scopes: ['vouchers:read', 'vouchers:read'] });
    const { key, ...apiKey } = res.body;
    const entry = await w.expectOne(res, { operation: 'apiKeys.create', resourceType: 'api_key', resourceId: apiKey.id }, [
      { type: 'api_key.created', payload: { apiKeyId: apiKey.id, name: 'ci', prefix: apiKey.prefix, scopes: ['vouchers:read'] } },
    ]);
    expect(entry.changes).toEqual({ after: apiKey });
    expect(key).toMatch(/^service_/);

    const revoked = await w.api.delete(`/api/v1/api-keys/${apiKey.id}`);
    const revocation = await w.expectOne(revoked, { operation: 'apiKeys.revoke', resourceType: 'api_key', resourceId: apiKey.id }, [
      { type: 'api_key.revoked', payload: { apiKeyId: apiKey.id } },
    ]);
    expect(revocation.changes).toEqual({ before: apiKey });
    expect((await service.api(key).get('/api/v1/api-keys')).status).toBe(401);

    await w.expectNothing(await w.api.delete(`/api/v1/api-keys/${apiKey.id}`), 404);
    await w.expectNothing(await w.api.delete(`/api/v1/api-keys/${randomUUID()}`), 404);
  });
});

describe('webhooks', () => {
  it('records creation, update, rotation, replays and deletion, never the secret', async () => {
    const w = await auditedWorkspace();
    const res = await w.api.post('/api/v1/webhooks', { url: URL_A, events: ['customer.created'] });
    const { secret, ...endpoint } = res.body;
    const id = endpoint.id;
    const creation = await w.expectOne(res, { operation: 'webhooks.create', resourceType: 'webhook', resourceId: id }, [
      { type: 'webhook.created', payload: { webhookId: id, url: URL_A, events: ['customer.created'] } },
    ]);
    expect(creation.changes).toEqual({ after: endpoint });

    const updated = await w.api.patch(`/api/v1/webhooks/${id}`, { url: URL_B, events: '*' });
    const update = await w.expectOne(updated, { operation: 'webhooks.update', resourceType: 'webhook', resourceId: id }, [
      { type: 'webhook.updated', payload: { webhookId: id, url: URL_B, events: '*' } },
    ]);
    expect(update.changes).toEqual({ before: endpoint, after: updated.body });

    const rotated = await w.api.post(`/api/v1/webhooks/${id}/secret/rotate`, { overlapSeconds: 60 });
    expect(rotated.body.secret).not.toBe(secret);
    const rotation = await w.expectOne(rotated, { operation: 'webhooks.rotateSecret', resourceType: 'webhook', resourceId: id }, [
      { type: 'webhook.secret_rotated', payload: { webhookId: id } },
    ]);
    expect(rotation.changes!.after).toMatchObject({ secretRotatedAt: expect.any(String), previousSecretExpiresAt: expect.any(String) });
    expect(JSON.stringify(rotation.changes)).not.toMatch(/secret"|ciphertext/i);

    // The event of the endpoint's own creation, delivered to it on request: a new delivery, then its replay.
    const { rows } = await service.pool.query<{ id: string }>(`SELECT id FROM events WHERE workspace_id = $1 AND type = 'webhook.created'`, [w.workspaceId]);
    const eventId = rows[0]!.id;
    const delivery = await w.api.post(`/api/v1/webhooks/${id}/events/${eventId}/replay`);
    await w.expectOne(delivery, { operation: 'webhooks.replayEvent', resourceType: 'webhook_delivery', resourceId: delivery.body.id }, []);
    const replay = await w.api.post(`/api/v1/webhooks/${id}/deliveries/${delivery.body.id}/replay`);
    await w.expectOne(replay, { operation: 'webhooks.replayDelivery', resourceType: 'webhook_delivery', resourceId: delivery.body.id }, []);

    await w.expectNothing(await w.api.post(`/api/v1/webhooks/${id}/events/${randomUUID()}/replay`), 404);
    await w.expectNothing(await w.api.post(`/api/v1/webhooks/${id}/deliveries/${randomUUID()}/replay`), 404);
    await w.expectNothing(await w.api.patch(`/api/v1/webhooks/${randomUUID()}`, { active: false }), 404);
    await w.expectNothing(await w.api.post(`/api/v1/webhooks/${randomUUID()}/secret/rotate`, {}), 404);
    const deactivated = await w.api.patch(`/api/v1/webhooks/${id}`, { active: false });
    await w.expectOne(deactivated, { operation: 'webhooks.update', resourceType: 'webhook', resourceId: id }, [
      { type: 'webhook.updated', payload: { webhookId: id, url: URL_B, events: '*' } },
    ]);
    await w.expectNothing(await w.api.post(`/api/v1/webhooks/${id}/deliveries/${delivery.body.id}/replay`), 409);

    const deletion = await w.expectOne(await w.api.delete(`/api/v1/webhooks/${id}`), { operation: 'webhooks.delete', resourceType: 'webhook', resourceId: id }, [
      { type: 'webhook.deleted', payload: { webhookId: id } },
    ]);
    expect(deletion.changes).toEqual({ before: deactivated.body });
    await w.expectNothing(await w.api.delete(`/api/v1/webhooks/${id}`), 404);
  });
});

describe('no secret is recorded', () => {
  it('keeps API keys and webhook secrets, first and rotated, out of every entry and event', async () => {
    const { api } = await auditedWorkspace();
    const secrets: string[] = [];
    for (const name of ['one', 'two']) {
      const key: string = (await api.create('/api/v1/api-keys', { name, scopes: ['*'] })).key;
      secrets.push(key, key.split('_')[2]!);
    }
    const workspace = await (await service.adminApi()).create('/api/v1/workspaces', { name: 'secretive' });
    secrets.push(workspace.apiKey, workspace.apiKey.split('_')[2]);
    for (const url of [URL_A, URL_B]) {
      const endpoint = await api.create('/api/v1/webhooks', { url, events: '*' });
      secrets.push(endpoint.secret);
      for (let i = 0; i < 2; i++) {
        const rotated = await api.post(`/api/v1/webhooks/${endpoint.id}/secret/rotate`, { overlapSeconds: 3600 });
        expect(rotated.status).toBe(200);
        secrets.push(rotated.body.secret);
      }
    }
    expect(new Set(secrets).size).toBe(secrets.length);

    const changes = (await service.pool.query<{ text: string | null }>('SELECT changes::text AS text FROM audit_entries')).rows.map((r) => r.text ?? '');
    const payloads = (await service.pool.query<{ text: string }>('SELECT payload::text AS text FROM events')).rows.map((r) => r.text);
    expect(changes.length).toBeGreaterThan(10);
    const recorded = [...changes, ...payloads].join('\n');
    for (const secret of secrets) expect(recorded).not.toContain(secret);
  });
});

describe('customers', () => {
  it('records create, update and delete; a sourceId conflict commits nothing', async () => {
    const w = await auditedWorkspace();
    const res = await w.api.post('/api/v1/customers', { sourceId: 'c-1', email: 'ada@example.com' });
    const id = res.body.id;
    const creation = await w.expectOne(res, { operation: 'customers.create', resourceType: 'customer', resourceId: id }, [
      { type: 'customer.created', payload: { customerId: id, sourceId: 'c-1', email: 'ada@example.com' } },
    ]);
    expect(creation.changes).toEqual({ after: res.body });

    await w.expectNothing(await w.api.post('/api/v1/customers', { sourceId: 'c-1' }), 409);
    const updated = await w.api.patch(`/api/v1/customers/${id}`, { name: 'Ada' });
    const update = await w.expectOne(updated, { operation: 'customers.update', resourceType: 'customer', resourceId: id }, []);
    expect(update.changes).toEqual({ before: res.body, after: updated.body });
    const other = await w.api.create('/api/v1/customers', { sourceId: 'c-2' });
    await w.skip();
    await w.expectNothing(await w.api.patch(`/api/v1/customers/${other.id}`, { sourceId: 'c-1' }), 409);
    expect((await w.api.get(`/api/v1/customers/${other.id}`)).body.sourceId).toBe('c-2');

    const deletion = await w.expectOne(await w.api.delete(`/api/v1/customers/${id}`), { operation: 'customers.delete', resourceType: 'customer', resourceId: id }, []);
    expect(deletion.changes).toEqual({ before: updated.body });
    await w.expectNothing(await w.api.delete(`/api/v1/customers/${id}`), 404);
  });
});

describe('orders', () => {
  it('records create (with the customer it creates) and status moves; a failure after a write commits nothing', async () => {
    const w = await auditedWorkspace();
    const res = await w.api.post('/api/v1/orders', { sourceId: 'o-1', amount: 4_000, currency: 'EUR', customer: { sourceId: 'buyer' } });
    const { id, customerId } = res.body;
    await w.expectOne(res, { operation: 'orders.create', resourceType: 'order', resourceId: id }, [
      { type: 'customer.created', payload: { customerId, sourceId: 'buyer' } },
      { type: 'order.created', payload: { orderId: id, sourceId: 'o-1', customerId, amount: 4_000, currency: 'EUR', status: res.body.status } },
    ]);

    // The new customer is inserted, then the order's sourceId conflicts: the customer and its event roll back too.
    await w.expectNothing(await w.api.post('/api/v1/orders', { sourceId: 'o-1', amount: 1, currency: 'EUR', customer: { sourceId: 'ghost' } }), 409);
    expect((await w.api.get('/api/v1/customers?sourceId=ghost')).body.data).toEqual([]);

    const paid = await w.api.patch(`/api/v1/orders/${id}`, { status: 'PAID' });
    const move = await w.expectOne(paid, { operation: 'orders.update', resourceType: 'order', resourceId: id }, [
      { type: 'order.paid', payload: { orderId: id, sourceId: 'o-1', status: 'PAID' } },
    ]);
    expect(move.changes).toMatchObject({ before: { status: res.body.status }, after: { status: 'PAID' } });
    await w.expectNothing(await w.api.patch(`/api/v1/orders/${id}`, { status: 'CREATED' }), 409);
    await w.expectNothing(await w.api.patch(`/api/v1/orders/${randomUUID()}`, { status: 'PAID' }), 404);
  });
});

describe('publications', () => {
  it('records a publication with its event; an unknown campaign rolls back the customer it created', async () => {
    const w = await auditedWorkspace();
    const campaign = await w.api.create('/api/v1/campaigns', { name: 'Welcome', type: 'DISCOUNT_COUPONS', currency: 'EUR' });
    await w.api.create('/api/v1/vouchers', { code: 'WELCOME-1', campaignId: campaign.id, discount: { type: 'AMOUNT', amountOff: 500 } });
    await w.skip();

    const res = await w.api.post('/api/v1/publications', { campaignId: campaign.id, customer: { sourceId: 'fan' } });
    const { id, customerId } = res.body;
    const entry = await w.expectOne(res, { operation: 'publications.create', resourceType: 'publication', resourceId: id }, [
      { type: 'customer.created', payload: { customerId, sourceId: 'fan' } },
      { type: 'voucher.published', payload: { publicationId: id, campaignId: campaign.id, customerId, voucherCode: 'WELCOME-1' } },
    ]);
    expect(entry.changes!.after).toMatchObject({ id, voucher: { code: 'WELCOME-1' } });

    await w.expectNothing(await w.api.post('/api/v1/publications', { campaignId: randomUUID(), customer: { sourceId: 'lost' } }), 404);
    expect((await w.api.get('/api/v1/customers?sourceId=lost')).body.data).toEqual([]);
    await w.expectNothing(await w.api.post('/api/v1/publications', { campaignId: campaign.id, customer: { sourceId: 'late' } }), 409);
  });
});

describe('segments', () => {
  it('records create, update, member changes (as counts) and delete, with the membership events', async () => {
    const w = await auditedWorkspace();
    const ada = (await w.api.create('/api/v1/customers', { name: 'Ada', metadata: { tier: 'gold' } })).id;
    const bob = (await w.api.create('/api/v1/customers', { name: 'Bob' })).id;
    await w.skip();

    const res = await w.api.post('/api/v1/segments', { name: 'VIP', type: 'STATIC', customerIds: [ada] });
    const id = res.body.id;
    const creation = await w.expectOne(res, { operation: 'segments.create', resourceType: 'segment', resourceId: id }, [
      { type: 'customer.segment.entered', payload: { customerId: ada, segmentId: id } },
    ]);
    expect(creation.changes).toEqual({ after: res.body });

    const added = await w.api.post(`/api/v1/segments/${id}/members`, { customerIds: [ada, bob] });
    const add = await w.expectOne(added, { operation: 'segments.addMembers', resourceType: 'segment', resourceId: id }, [
      { type: 'customer.segment.entered', payload: { customerId: bob, segmentId: id } },
    ]);
    expect(add.changes).toEqual({ after: { added: 1 } });
    await w.expectNothing(await w.api.post(`/api/v1/segments/${id}/members`, { customerIds: [randomUUID()] }), 400);

    const removed = await w.api.post(`/api/v1/segments/${id}/members/remove`, { customerIds: [ada, randomUUID()] });
    const removal = await w.expectOne(removed, { operation: 'segments.removeMembers', resourceType: 'segment', resourceId: id }, [
      { type: 'customer.segment.left', payload: { customerId: ada, segmentId: id } },
    ]);
    expect(removal.changes).toEqual({ after: { removed: 1 } });

    const renamed = await w.api.patch(`/api/v1/segments/${id}`, { name: 'VIPs' });
    const rename = await w.expectOne(renamed, { operation: 'segments.update', resourceType: 'segment', resourceId: id }, []);
    expect(rename.changes).toMatchObject({ before: { name: 'VIP', size: 1 }, after: { name: 'VIPs', size: 1 } });

    const gold = { field: 'customer.metadata.tier', op: 'eq', value: 'gold' };
    const auto = await w.api.post('/api/v1/segments', { name: 'Gold', type: 'AUTO', conditions: gold });
    await w.expectOne(auto, { operation: 'segments.create', resourceType: 'segment', resourceId: auto.body.id }, [
      { type: 'customer.segment.entered', payload: { customerId: ada, segmentId: auto.body.id } },
    ]);
    await w.expectNothing(await w.api.post(`/api/v1/segments/${auto.body.id}/members`, { customerIds: [bob] }), 409);
    await w.expectNothing(await w.api.patch(`/api/v1/segments/${id}`, { conditions: gold }), 400);

    const deletion = await w.expectOne(await w.api.delete(`/api/v1/segments/${id}`), { operation: 'segments.delete', resourceType: 'segment', resourceId: id }, [
      { type: 'customer.segment.left', payload: { customerId: bob, segmentId: id } },
    ]);
    expect(deletion.changes).toEqual({ before: renamed.body });
    await w.expectNothing(await w.api.delete(`/api/v1/segments/${id}`), 404);
  });
});

describe('promotion tiers', () => {
  it('records create, update and delete of a tier; refusals commit nothing', async () => {
    const w = await auditedWorkspace();
    const promotion = await w.api.create('/api/v1/campaigns', { name: 'auto', type: 'PROMOTION' });
    const coupons = await w.api.create('/api/v1/campaigns', { name: 'codes', type: 'DISCOUNT_COUPONS' });
    await w.skip();

    const res = await w.api.post(`/api/v1/campaigns/${promotion.id}/tiers`, { name: '10%', discount: { type: 'PERCENT', percentOff: 10 } });
    const id = res.body.id;
    const creation = await w.expectOne(res, { operation: 'promotions.createTier', resourceType: 'promotion_tier', resourceId: id }, []);
    expect(creation.changes).toEqual({ after: res.body });
    await w.expectNothing(await w.api.post(`/api/v1/campaigns/${coupons.id}/tiers`, { name: 'no', discount: { type: 'PERCENT', percentOff: 5 } }), 409);
    await w.expectNothing(
      await w.api.post(`/api/v1/campaigns/${promotion.id}/tiers`, { name: 'no', discount: { type: 'PERCENT', percentOff: 5 }, validationRuleIds: [randomUUID()] }),
      400,
    );

    const updated = await w.api.patch(`/api/v1/promotions/tiers/${id}`, { name: '15%', discount: { type: 'PERCENT', percentOff: 15 } });
    const update = await w.expectOne(updated, { operation: 'promotions.updateTier', resourceType: 'promotion_tier', resourceId: id }, []);
    expect(update.changes).toEqual({ before: res.body, after: updated.body });
    await w.expectNothing(await w.api.patch(`/api/v1/promotions/tiers/${randomUUID()}`, { name: 'x' }), 404);

    const deletion = await w.expectOne(await w.api.delete(`/api/v1/promotions/tiers/${id}`), { operation: 'promotions.deleteTier', resourceType: 'promotion_tier', resourceId: id }, []);
    expect(deletion.changes).toEqual({ before: updated.body });
    await w.expectNothing(await w.api.delete(`/api/v1/promotions/tiers/${id}`), 404);
  });
});
