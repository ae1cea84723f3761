// The MCP face over streamable HTTP at /api/mcp, through the SDK's own client: tools by scope, reads and writes.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/registry.js';
import { hasScope } from '../../src/contract/scopes.js';
import { packageVersion } from '../../src/platform/paths.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

async function connect(key: string | undefined, query = ''): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${service.baseUrl}/api/mcp${query}`), { requestInit: { headers } }));
  return client;
}

/** Every keyword used anywhere in a schema (property names excluded, data values not entered). */
function keywordsOf(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((item) => keywordsOf(item, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      found.add(key);
      if (key === 'properties') Object.values(value as object).forEach((sub) => keywordsOf(sub, found));
      else if (!['default', 'const', 'enum', 'examples'].includes(key)) keywordsOf(value, found);
    }
  }
  return found;
}

describe('MCP over streamable HTTP', () => {
  it('lists lean schemas: no $ref or $defs, no non-standard keyword, no pattern where a format says it', async () => {
    const { key } = await service.newWorkspace();
    const client = await connect(key);
    try {
      const { tools } = await client.listTools();
      const standard = new Set([
        'type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'oneOf', 'allOf', 'not', 'enum', 'const',
        'default', 'description', 'title', 'format', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
        'minLength', 'maxLength', 'minItems', 'maxItems', 'uniqueItems', 'examples', 'propertyNames', 'multipleOf',
        'minProperties', 'maxProperties', 'readOnly', 'writeOnly', 'deprecated', 'prefixItems', 'contentEncoding',
      ]);
      for (const tool of tools) {
        const text = JSON.stringify(tool.inputSchema);
        expect(text, tool.name).not.toContain('$ref');
        expect(text, tool.name).not.toContain('$defs');
        expect([...keywordsOf(tool.inputSchema)].filter((k) => !standard.has(k)), tool.name).toEqual([]);
      }
      expect(JSON.stringify(tools).match(/\[0-9a-fA-F\]\{8\}/g) ?? []).toEqual([]);
      // Inlined, a reference still says what it referred to: a customer reference has its fields.
      const redeem = tools.find((t) => t.name === 'redemptions_redeem')!;
      expect(JSON.stringify(redeem.inputSchema.properties!['customer'])).toContain('sourceId');
    } finally {
      await client.close();
    }
  });

  it('lists the checkout toolset or the admin one when the host asks, and refuses an unknown toolset', async () => {
    const { key } = await service.newWorkspace();
    const sizes: Record<string, number> = {};
    for (const toolset of ['checkout', 'admin', '']) {
      const client = await connect(key, toolset ? `?toolset=${toolset}` : '');
      try {
        const { tools } = await client.listTools();
        sizes[toolset || 'all'] = JSON.stringify({ tools }).length;
        const names = tools.map((t) => t.name);
        if (toolset === 'checkout') {
          expect(names.sort()).toEqual(['customers_get', 'customers_list', 'promotions_redeemTier', 'promotions_validate', 'qualifications_check', 'redemptions_get', 'redemptions_redeem', 'redemptions_releaseSession', 'redemptions_rollback', 'redemptions_stack', 'redemptions_validateStack', 'vouchers_validate']);
          const refused = await client.callTool({ name: 'campaigns_list', arguments: {} }).catch((error: Error) => error);
          expect(String(refused instanceof Error ? refused.message : JSON.stringify(refused))).toContain('campaigns_list');
        }
        if (toolset === 'admin') expect(names).toContain('campaigns_create'), expect(names).not.toContain('redemptions_redeem');
      } finally {
        await client.close();
      }
    }
    expect(sizes['checkout']!).toBeLessThan(sizes['admin']!);
    // a checkout agent's tools in a few thousand tokens (27,277 bytes measured with the decisions' output unions;
    // 30,729 once every cart may carry item categories, collections, metadata and shipping, described once; the stack
    // preview adds about 4,500, issue 33)
    expect(sizes['checkout']!).toBeLessThan(37_000);
    console.log(`tools/list sizes (bytes): ${JSON.stringify(sizes)}`);
    const unknown = await fetch(`${service.baseUrl}/api/mcp?toolset=everything`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: 'invalid_request' });
  });

  it('lists every operation as a tool for a * key, with JSON schemas, descriptions and annotations by method', async () => {
    const { key } = await service.newWorkspace();
    const client = await connect(key);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'promotions', version: packageVersion });
      const { tools } = await client.listTools();
      const expected = operations.filter((op) => op.scope !== 'workspaces:admin' && op.scope !== 'none').map((op) => op.name.replace('.', '_')).sort();
      expect(tools.every((t) => /^[A-Za-z0-9_-]{1,64}$/.test(t.name))).toBe(true);
      expect(tools.map((t) => t.name).sort()).toEqual(expected);
      const create = tools.find((t) => t.name === 'vouchers_create')!;
      expect(create.inputSchema.type).toBe('object');
      expect(create.inputSchema.properties).toHaveProperty('code');
      expect(create.description).toContain('vouchers:write');
      expect(create.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
      const get = tools.find((t) => t.name === 'vouchers_get')!;
      expect(get.inputSchema.required).toEqual(['code']);
      expect(get.annotations).toMatchObject({ readOnlyHint: true });
      expect(tools.find((t) => t.name === 'vouchers_delete')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    } finally {
      await client.close();
    }
  });

  it('calls a write tool and a read tool; refusals come back as tool errors carrying the problem', async () => {
    const { key } = await service.newWorkspace();
    const client = await connect(key);
    try {
      const created = await client.callTool({ name: 'campaigns_create', arguments: { name: 'Agent made', type: 'PROMOTION' } });
      expect(created.isError).toBeFalsy();
      const campaign = created.structuredContent as { id: string; name: string };
      expect(campaign.name).toBe('Agent made');
      const read = await client.callTool({ name: 'campaigns_list', arguments: { limit: 5 } });
      expect((read.structuredContent as { data: Array<{ id: string }> }).data.map((c) => c.id)).toEqual([campaign.id]);
      expect(JSON.parse((read.content as Array<{ text: string }>)[0]!.text).data).toHaveLength(1);

      const invalid = await client.callTool({ name: 'campaigns_create', arguments: { name: 'x' } });
      expect(invalid.isError).toBe(true);
      expect(invalid.structuredContent).toMatchObject({ problem: { code: 'invalid_request', errors: [{ path: 'type' }] } });
      const missing = await client.callTool({ name: 'campaigns_get', arguments: { id: '0b6f4c1e-8d2a-4f57-9c55-7f0f2a1d9e31' } });
      expect(missing.structuredContent).toMatchObject({ problem: { code: 'not_found' } });
      await expect(client.callTool({ name: 'no_such', arguments: {} })).rejects.toThrow(/no tool named/);
    } finally {
      await client.close();
    }
  });

  it('declares business decisions as output unions on ok / valid, and their results (refusals, problems) conform', async () => {
    const { key } = await service.newWorkspace();
    const client = await connect(key, '?toolset=checkout');
    try {
      const { tools } = await client.listTools();
      const redeem = tools.find((t) => t.name === 'redemptions_redeem')!;
      const branches = (redeem.outputSchema as unknown as { oneOf: Array<{ properties: Record<string, { const?: unknown }>; required: string[] }> }).oneOf;
      expect(branches.map((b) => b.properties['ok']?.const ?? 'problem')).toEqual([true, false, 'problem']);
      expect(branches[1]!.required).toEqual(expect.arrayContaining(['ok', 'code']));
      expect(JSON.stringify(redeem.outputSchema)).not.toMatch(/\$ref|\$defs|"additionalProperties":false/);
      const validate = tools.find((t) => t.name === 'vouchers_validate')!;
      expect((validate.outputSchema as unknown as { oneOf: Array<{ properties: Record<string, { const?: unknown }> }> }).oneOf[0]!.properties['valid']?.const).toBe(true);
      // tools that are not decisions declare no output (the list stays lean)
      expect(tools.find((t) => t.name === 'customers_get')!.outputSchema).toBeUndefined();

      // The SDK client validates structured content against the declared schema: a refusal, a success and a problem pass.
      const refused = await client.callTool({ name: 'redemptions_redeem', arguments: { code: 'NO-SUCH-CODE', order: { amount: 1000, currency: 'EUR' } } });
      expect(refused.structuredContent).toMatchObject({ ok: false, code: 'voucher_not_found' });
      const admin = await connect(key);
      try {
        await admin.callTool({ name: 'vouchers_create', arguments: { code: 'MCP-OUT-1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 10 } } });
      } finally {
        await admin.close();
      }
      const passed = await client.callTool({ name: 'vouchers_validate', arguments: { code: 'MCP-OUT-1', order: { amount: 1000, currency: 'EUR' } } });
      expect(passed.structuredContent).toMatchObject({ valid: true, discount: { amount: 100 } });
      const redeemed = await client.callTool({ name: 'redemptions_redeem', arguments: { code: 'MCP-OUT-1', order: { amount: 1000, currency: 'EUR' } } });
      expect(redeemed.structuredContent).toMatchObject({ ok: true, redemption: { amount: 100 } });
      const invalid = await client.callTool({ name: 'redemptions_redeem', arguments: { code: 'MCP-OUT-1', order: { amount: -1, currency: 'EUR' } } });
      expect(invalid).toMatchObject({ isError: true, structuredContent: { problem: { code: 'invalid_request' } } });
    } finally {
      await client.close();
    }
  });

  it('shows a read-only key only the tools its scopes allow and refuses a write tool', async () => {
    const { key } = await service.newWorkspace(['campaigns:read', 'vouchers:read']);
    const client = await connect(key);
    try {
      const { tools } = await client.listTools();
      const allowed = operations.filter((op) => op.scope !== 'none' && hasScope(['campaigns:read', 'vouchers:read'], op.scope)).map((op) => op.name.replace('.', '_'));
      expect(tools.map((t) => t.name).sort()).toEqual(allowed.sort());
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['campaigns_get', 'campaigns_list', 'vouchers_get', 'vouchers_list']));
      expect(tools.map((t) => t.name)).not.toContain('campaigns_create');
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
      const refused = await client.callTool({ name: 'campaigns_create', arguments: { name: 'x', type: 'PROMOTION' } });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ problem: { status: 403, code: 'forbidden' } });
    } finally {
      await client.close();
    }
  });

  it('answers a client that does not accept both JSON and an event stream with a 406 problem', async () => {
    const { key } = await service.newWorkspace();
    for (const accept of [undefined, 'application/json', 'text/event-stream']) {
      const res = await fetch(`${service.baseUrl}/api/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status, String(accept)).toBe(406);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(await res.json()).toMatchObject({ status: 406, code: 'not_acceptable' });
    }
  });

  it('answers malformed MCP messages without a server error', async () => {
    const { key } = await service.newWorkspace();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    for (const body of ['{}', '[]', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vouchers_get","arguments":"x"}}', '{"jsonrpc":"2.0","method":42}', 'null', '{bad']) {
      const res = await fetch(`${service.baseUrl}/api/mcp`, { method: 'POST', headers, body });
      expect(res.status, body).toBeLessThan(500);
    }
  });

  it('needs the same Bearer key as the API and takes POST only', async () => {
    await expect(connect(undefined)).rejects.toThrow();
    const res = await fetch(`${service.baseUrl}/api/mcp`, { headers: { authorization: 'Bearer nope' } });
    expect(res.status).toBe(405);
    const noKey = await fetch(`${service.baseUrl}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as { code: string }).code).toBe('unauthorized');
  });
});
