// The new resources through every face of the registry: the worked example (VIP segment, rule, PROMOTION campaign
// with a schedule and a daily budget, a tier) built with the typed client, then the same qualification asked over
// REST, RPC, the typed client and MCP, and the tier redeemed through the client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

describe('rules, segments, tiers and qualification on every face', () => {
  it('builds the VIP weekend shoes campaign with the client and qualifies the same over REST, RPC, client and MCP', async () => {
    const { key, api } = await service.newWorkspace();
    const client = createClient({ baseUrl: service.baseUrl, apiKey: key });
    const vip = await client.segments.create({ name: 'VIP', type: 'AUTO', conditions: { field: 'customer.metadata.vip', op: 'eq', value: true } });
    await client.customers.create({ sourceId: 'anna', metadata: { vip: true } });
    const rule = await client.validationRules.create({
      name: 'VIP shoes',
      conditions: { all: [{ field: 'customer.segments', op: 'contains', value: vip.id }, { field: 'order.items.productId', op: 'contains', value: 'shoes' }] },
      applicableTo: { productIds: ['shoes'] },
    });
    const campaign = await client.campaigns.create({
      name: 'VIP shoes, every day here',
      type: 'PROMOTION',
      currency: 'EUR',
      schedule: { daysOfWeek: [0, 1, 2, 3, 4, 5, 6] },
      budget: { daily: { discountAmount: 100_000 } },
    });
    const tier = await client.promotions.createTier({ id: campaign.id, name: '10% off shoes', discount: { type: 'PERCENT', percentOff: 10 }, validationRuleIds: [rule.id] });
    const order = { amount: 20_000, currency: 'EUR', items: [{ productId: 'shoes', quantity: 1, price: 12_000 }, { productId: 'socks', quantity: 4, price: 2_000 }] };
    const body = { order, customer: { sourceId: 'anna' } };

    const rest = await api.post('/api/v1/qualifications', body);
    expect(rest.body.data).toEqual([expect.objectContaining({ kind: 'PROMOTION_TIER', tierId: tier.id, discount: { type: 'PERCENT', amount: 1_200 } })]);
    const rpc = await api.post('/api/rpc/qualifications.check', body);
    expect(rpc.status).toBe(200);
    expect(rpc.body).toEqual(rest.body);
    expect(await client.qualifications.check(body)).toEqual(rest.body);

    const mcp = new Client({ name: 'faces-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${service.baseUrl}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    try {
      const result = (await mcp.callTool({ name: 'qualifications_check', arguments: body })) as { structuredContent?: unknown; content: Array<{ type: string; text?: string }> };
      const answer = result.structuredContent ?? JSON.parse(result.content.find((c) => c.type === 'text')!.text!);
      expect(answer).toEqual(rest.body);
    } finally {
      await mcp.close();
    }

    const redeemed = await client.promotions.redeemTier({ id: tier.id, ...body, idempotencyKey: 'faces-1' });
    expect(redeemed).toMatchObject({ ok: true, redemption: { tierId: tier.id, amount: 1_200 } });
    expect((await client.campaigns.get({ id: campaign.id })).budgetUsage).toMatchObject({ daily: { redemptions: 1, discountAmount: 1_200 } });
  });
});
