// Campaign, voucher, validation rule and workspace writes over real HTTP and PostgreSQL: each commits exactly one audit
// entry naming its actor and its events, in the transaction of the change; a refused write commits none of the three.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import type { AuditEntryRow } from '../support/audit-entries.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

type EntryRow = AuditEntryRow;

async function entries(workspaceId: string): Promise<EntryRow[]> {
  const { rows } = await service.pool.query<EntryRow & Record<string, unknown>>(
    `SELECT operation, resource_type, resource_id, changes, actor_type, actor_id FROM audit_entries
     WHERE workspace_id = $1 ORDER BY created_at, id`,
    [workspaceId],
  );
  return rows;
}

async function events(workspaceId: string): Promise<{ type: string; payload: any }[]> {
  const { rows } = await service.pool.query<{ type: string; payload: any }>(
    'SELECT type, payload FROM events WHERE workspace_id = $1 ORDER BY created_at, id',
    [workspaceId],
  );
  return rows;
}

/** The id of the API key behind a client (`service_<prefix>_<secret>`): the actor id its entries carry. */
async function keyId(api: ApiClient): Promise<string> {
  const prefix = api.key!.split('_')[1];
  const { rows } = await service.pool.query<{ id: string }>('SELECT id FROM api_keys WHERE prefix = $1', [prefix]);
  return rows[0]!.id;
}

/** A workspace, its client and a check that the write just made committed this one entry and these events. */
async function workspace() {
  const { workspaceId, api } = await service.newWorkspace();
  const actorId = await keyId(api);
  let seenEntries = 0;
  let seenEvents = 0;
  return {
    workspaceId,
    api,
    /** The entries and events committed since the last call. */
    async committed() {
      const allEntries = await entries(workspaceId);
      const allEvents = await events(workspaceId);
      const fresh = { entries: allEntries.slice(seenEntries), events: allEvents.slice(seenEvents) };
      seenEntries = allEntries.length;
      seenEvents = allEvents.length;
      for (const entry of fresh.entries) expect(entry).toMatchObject({ actor_type: 'api_key', actor_id: actorId });
      return fresh;
    },
  };
}

const discount = { type: 'PERCENT', percentOff: 10 };

describe('campaigns: one entry and one event per write', () => {
  it('records create, update and delete with before/after and campaign.* events', async () => {
    const { api, committed } = await workspace();
    const campaign = await api.create('/api/v1/campaigns', { name: 'Summer', type: 'DISCOUNT_COUPONS' });
    const created = await committed();
    expect(created.entries).toEqual([
      expect.objectContaining({ operation: 'campaigns.create', resource_type: 'campaign', resource_id: campaign.id, changes: { after: expect.objectContaining({ id: campaign.id, name: 'Summer' }) } }),
    ]);
    expect(created.events).toEqual([{ type: 'campaign.created', payload: { campaignId: campaign.id, campaign: expect.objectContaining({ id: campaign.id, name: 'Summer' }) } }]);

    const updated = await api.patch(`/api/v1/campaigns/${campaign.id}`, { name: 'Winter' });
    expect(updated.status).toBe(200);
    const update = await committed();
    expect(update.entries).toHaveLength(1);
    expect(update.entries[0]).toMatchObject({ operation: 'campaigns.update', resource_type: 'campaign', resource_id: campaign.id });
    expect(update.entries[0]!.changes!.before).toMatchObject({ name: 'Summer' });
    expect(update.entries[0]!.changes!.after).toEqual(updated.body);
    expect(update.events).toEqual([{ type: 'campaign.updated', payload: { campaignId: campaign.id, campaign: updated.body } }]);

    expect((await api.delete(`/api/v1/campaigns/${campaign.id}`)).status).toBe(204);
    const deletion = await committed();
    expect(deletion.entries).toEqual([
      expect.objectContaining({ operation: 'campaigns.delete', resource_type: 'campaign', resource_id: campaign.id, changes: { before: updated.body } }),
    ]);
    expect(deletion.events).toEqual([{ type: 'campaign.deleted', payload: { campaignId: campaign.id } }]);
  });

  it('commits neither entry nor event for a refused write', async () => {
    const { api, committed } = await workspace();
    const campaign = await api.create('/api/v1/campaigns', { name: 'Dated', type: 'DISCOUNT_COUPONS', startDate: '2030-01-10T00:00:00Z' });
    await committed();
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await api.patch(`/api/v1/campaigns/${missing}`, { name: 'x' })).status).toBe(404);
    expect((await api.patch(`/api/v1/campaigns/${campaign.id}`, { expirationDate: '2030-01-01T00:00:00Z' })).status).toBe(400);
    expect((await api.patch(`/api/v1/campaigns/${campaign.id}`, { type: 'GIFT_VOUCHERS' })).status).toBe(400);
    expect((await api.patch(`/api/v1/campaigns/${campaign.id}`, { validationRuleIds: [missing] })).status).toBe(400);
    expect((await api.delete(`/api/v1/campaigns/${missing}`)).status).toBe(404);
    expect(await committed()).toEqual({ entries: [], events: [] });
    expect((await api.get(`/api/v1/campaigns/${campaign.id}`)).body).toEqual(campaign);
  });
});

describe('vouchers: one entry and one event per write', () => {
  it('records create, update, disable, enable and delete with voucher.* events', async () => {
    const { api, committed } = await workspace();
    const voucher = await api.create('/api/v1/vouchers', { code: 'AUDIT-1', type: 'DISCOUNT', discount });
    const steps: [string, () => Promise<{ status: number; body: any }>, string][] = [
      ['vouchers.update', () => api.patch('/api/v1/vouchers/AUDIT-1', { redemptionLimit: 5 }), 'voucher.updated'],
      ['vouchers.disable', () => api.post('/api/v1/vouchers/AUDIT-1/disable'), 'voucher.disabled'],
      ['vouchers.enable', () => api.post('/api/v1/vouchers/AUDIT-1/enable'), 'voucher.enabled'],
    ];
    const created = await committed();
    expect(created.entries).toEqual([
      expect.objectContaining({ operation: 'vouchers.create', resource_type: 'voucher', resource_id: voucher.id, changes: { after: voucher } }),
    ]);
    expect(created.events).toEqual([{ type: 'voucher.created', payload: { voucherId: voucher.id, code: 'AUDIT-1', voucher } }]);

    let before = voucher;
    for (const [operation, call, eventType] of steps) {
      const response = await call();
      expect(response.status).toBe(200);
      const step = await committed();
      expect(step.entries).toEqual([
        expect.objectContaining({ operation, resource_type: 'voucher', resource_id: voucher.id, changes: { before, after: response.body } }),
      ]);
      expect(step.events).toEqual([{ type: eventType, payload: { voucherId: voucher.id, code: 'AUDIT-1', voucher: response.body } }]);
      before = response.body;
    }
    expect(before).toMatchObject({ active: true, redemption: { limit: 5 } });

    expect((await api.delete('/api/v1/vouchers/AUDIT-1')).status).toBe(204);
    const deletion = await committed();
    expect(deletion.entries).toEqual([
      expect.objectContaining({ operation: 'vouchers.delete', resource_type: 'voucher', resource_id: voucher.id, changes: { before } }),
    ]);
    expect(deletion.events).toEqual([{ type: 'voucher.deleted', payload: { voucherId: voucher.id, code: 'AUDIT-1' } }]);
  });

  it('records a bulk generation as one entry on the campaign, without an event per code', async () => {
    const { workspaceId, api, committed } = await workspace();
    const campaign = await api.create('/api/v1/campaigns', { name: 'Bulk', type: 'DISCOUNT_COUPONS', voucher: { type: 'DISCOUNT', discount } });
    await committed();
    const generated = await api.create(`/api/v1/campaigns/${campaign.id}/vouchers/generate`, { count: 300 });
    expect(generated.count).toBe(300);
    const generation = await committed();
    expect(generation.entries).toEqual([
      expect.objectContaining({ operation: 'vouchers.generate', resource_type: 'campaign', resource_id: campaign.id, changes: { after: { generated: 300 } } }),
    ]);
    expect(generation.events).toEqual([]);
    const { rows } = await service.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM vouchers WHERE workspace_id = $1', [workspaceId]);
    expect(rows[0]!.count).toBe(300);
  });

  it('commits neither entry, event nor change for a refused write', async () => {
    const { api, committed } = await workspace();
    const voucher = await api.create('/api/v1/vouchers', { code: 'KEEP', type: 'DISCOUNT', discount, startDate: '2030-01-10T00:00:00Z' });
    await committed();
    expect((await api.post('/api/v1/vouchers', { code: 'KEEP', type: 'DISCOUNT', discount })).status).toBe(409);
    expect((await api.patch('/api/v1/vouchers/NONE', { priority: 1 })).status).toBe(404);
    expect((await api.patch('/api/v1/vouchers/KEEP', { expirationDate: '2030-01-01T00:00:00Z' })).status).toBe(400);
    expect((await api.post('/api/v1/vouchers/NONE/disable')).status).toBe(404);
    expect((await api.post('/api/v1/vouchers/NONE/enable')).status).toBe(404);
    expect((await api.delete('/api/v1/vouchers/NONE')).status).toBe(404);
    expect(await committed()).toEqual({ entries: [], events: [] });
    expect((await api.get('/api/v1/vouchers/KEEP')).body).toEqual(voucher);

    // A generation that inserts the codes still free, then finds the space used up, commits none of them.
    const campaign = await api.create('/api/v1/campaigns', { name: 'Tiny space', type: 'DISCOUNT_COUPONS', voucher: { type: 'DISCOUNT', discount } });
    const config = { charset: 'AB', length: 3 };
    await api.create(`/api/v1/campaigns/${campaign.id}/vouchers/generate`, { count: 4, codeConfig: config });
    await api.create(`/api/v1/campaigns/${campaign.id}/vouchers/generate`, { count: 2, codeConfig: config });
    expect((await committed()).entries.map((e) => e.operation)).toEqual(['campaigns.create', 'vouchers.generate', 'vouchers.generate']);
    expect((await api.post(`/api/v1/campaigns/${campaign.id}/vouchers/generate`, { count: 3, codeConfig: config })).status).toBe(409);
    expect(await committed()).toEqual({ entries: [], events: [] });
    const { rows } = await service.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM vouchers WHERE campaign_id = $1', [campaign.id]);
    expect(rows[0]!.count).toBe(6);
  });
});

describe('validation rules: one entry and one event per write', () => {
  const conditions = { field: 'order.amount', op: 'gte', value: 1000 };

  it('records create, update and delete with validation_rule.* events', async () => {
    const { api, committed } = await workspace();
    const rule = await api.create('/api/v1/validation-rules', { name: 'Big', conditions });
    const created = await committed();
    expect(created.entries).toEqual([
      expect.objectContaining({ operation: 'validationRules.create', resource_type: 'validation_rule', resource_id: rule.id, changes: { after: rule } }),
    ]);
    expect(created.events).toEqual([{ type: 'validation_rule.created', payload: { validationRuleId: rule.id, validationRule: rule } }]);

    const updated = await api.patch(`/api/v1/validation-rules/${rule.id}`, { name: 'Bigger' });
    expect(updated.status).toBe(200);
    const update = await committed();
    expect(update.entries).toEqual([
      expect.objectContaining({ operation: 'validationRules.update', resource_id: rule.id, changes: { before: rule, after: updated.body } }),
    ]);
    expect(update.events).toEqual([{ type: 'validation_rule.updated', payload: { validationRuleId: rule.id, validationRule: updated.body } }]);

    expect((await api.delete(`/api/v1/validation-rules/${rule.id}`)).status).toBe(204);
    const deletion = await committed();
    expect(deletion.entries).toEqual([
      expect.objectContaining({ operation: 'validationRules.delete', resource_id: rule.id, changes: { before: updated.body } }),
    ]);
    expect(deletion.events).toEqual([{ type: 'validation_rule.deleted', payload: { validationRuleId: rule.id } }]);
  });

  it('commits neither entry nor event for a refused write, nor for an evaluation', async () => {
    const { api, committed } = await workspace();
    const rule = await api.create('/api/v1/validation-rules', { name: 'Used', conditions });
    await api.create('/api/v1/campaigns', { name: 'User', type: 'DISCOUNT_COUPONS', validationRuleIds: [rule.id] });
    await committed();
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await api.delete(`/api/v1/validation-rules/${rule.id}`)).status).toBe(409);
    expect((await api.patch(`/api/v1/validation-rules/${missing}`, { name: 'x' })).status).toBe(404);
    expect((await api.delete(`/api/v1/validation-rules/${missing}`)).status).toBe(404);
    expect((await api.post(`/api/v1/validation-rules/${rule.id}/evaluate`, { order: { amount: 5000, currency: 'EUR' } })).status).toBe(200);
    expect(await committed()).toEqual({ entries: [], events: [] });
    expect((await api.get(`/api/v1/validation-rules/${rule.id}`)).body).toEqual(rule);
  });
});

describe('workspaces: one entry per write, no secret in it', () => {
  it("records a creation in the caller's workspace without the new key", async () => {
    const admin = await service.adminApi();
    const { rows } = await service.pool.query<{ workspace_id: string }>('SELECT workspace_id FROM api_keys WHERE prefix = $1', [admin.key!.split('_')[1]]);
    const callerWorkspace = rows[0]!.workspace_id;
    const created = await admin.create('/api/v1/workspaces', { name: 'Audited' });
    const recorded = (await entries(callerWorkspace)).filter((e) => e.resource_id === created.id);
    expect(recorded).toEqual([
      { operation: 'workspaces.create', resource_type: 'workspace', resource_id: created.id, changes: { after: { id: created.id, name: 'Audited' } }, actor_type: 'api_key', actor_id: await keyId(admin) },
    ]);
    expect(JSON.stringify(recorded)).not.toContain(created.apiKey);
    expect(await entries(created.id)).toEqual([]);
  });

  it('records an update with before and after and its workspace.updated event, and nothing for a refused one', async () => {
    const { api, committed } = await workspace();
    const before = (await api.get('/api/v1/workspace')).body;
    const updated = await api.patch('/api/v1/workspace', { timeZone: 'europe/berlin' });
    expect(updated.status).toBe(200);
    const update = await committed();
    expect(update.entries).toEqual([
      expect.objectContaining({ operation: 'workspaces.update', resource_type: 'workspace', resource_id: before.id, changes: { before, after: updated.body } }),
    ]);
    expect(update.events).toEqual([{ type: 'workspace.updated', payload: { workspaceId: before.id, workspace: updated.body } }]);
    expect((await api.patch('/api/v1/workspace', { stackLimit: 0 })).status).toBe(400);
    expect(await committed()).toEqual({ entries: [], events: [] });
  });
});
