// `promotions mcp` (stdio) through the SDK's own client and stdio transport, against a real service.
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageVersion, projectRoot } from '../../src/platform/paths.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(projectRoot, 'dist/src/cli/index.js'), 'mcp'],
    env: { PATH: process.env.PATH ?? '', PROMOTIONS_URL: service.baseUrl, PROMOTIONS_API_KEY: key, XDG_CONFIG_HOME: '/nonexistent' },
    stderr: 'pipe',
  });
  await client.connect(transport);
  return client;
}

describe('MCP over stdio', () => {
  it('lists the tools the key allows, and calls a write and a read tool through the service', async () => {
    const { key } = await service.newWorkspace(['vouchers:write', 'campaigns:read']);
    const client = await connect(key);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'promotions', version: packageVersion });
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toContain('vouchers_create');
      expect(names).toContain('campaigns_list');
      expect(names).not.toContain('campaigns_create');
      expect(names).not.toContain('customers_list');

      const created = await client.callTool({ name: 'vouchers_create', arguments: { code: 'STDIO-1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 15 } } });
      expect(created.isError).toBeFalsy();
      expect(created.structuredContent).toMatchObject({ code: 'STDIO-1', discount: { percentOff: 15 } });
      const read = await client.callTool({ name: 'vouchers_get', arguments: { code: 'STDIO-1' } });
      expect(read.structuredContent).toMatchObject({ code: 'STDIO-1' });

      const refused = await client.callTool({ name: 'campaigns_create', arguments: { name: 'x', type: 'PROMOTION' } });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ problem: { status: 403, code: 'forbidden' } });
    } finally {
      await client.close();
    }
  });

  it('does not start with a key the service refuses', async () => {
    await expect(connect('service_abcdefghijkl_' + 'y'.repeat(40))).rejects.toThrow();
  });
});
