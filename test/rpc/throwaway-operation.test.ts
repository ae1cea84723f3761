// One operation added at test time (declared once, with its handler) shows up in every face with no other change:
// REST, RPC, OpenAPI, the client, the CLI and the MCP tools.
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { operations } from '../../src/registry.js';
import { runCliProcess } from '../cli/cli-process.js';
import { throwawayHandlers } from '../cli/fixtures/throwaway-operations.mjs';
import { startServiceWithOperations, type ServiceWithOperations } from './service-with-operations.js';

const CLI_WITH_THROWAWAY = path.join(import.meta.dirname, '../cli/fixtures/cli-with-throwaway.mjs');
let service: ServiceWithOperations;
let key: string;
beforeAll(async () => {
  service = await startServiceWithOperations({ extra: throwawayHandlers });
  key = await service.newKey();
});
afterAll(async () => service?.close());

const expected = { label: 'hello', echoed: ['hi', 'hi'], tags: ['a'] };

describe('a throwaway operation registered at test time', () => {
  it('is not in the registry', () => {
    expect(operations.map((op) => op.name)).not.toContain('throwaways.echo');
  });

  it('is served by REST and RPC, with the same answer', async () => {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const rest = await fetch(`${service.baseUrl}/api/v1/throwaways/hello/echo?times=2`, { method: 'POST', headers, body: JSON.stringify({ message: 'hi', tags: ['a'] }) });
    expect(rest.status).toBe(200);
    expect(await rest.json()).toEqual(expected);
    const rpc = await fetch(`${service.baseUrl}/api/rpc/throwaways.echo`, { method: 'POST', headers, body: JSON.stringify({ label: 'hello', times: 2, message: 'hi', tags: ['a'] }) });
    expect(await rpc.json()).toEqual(expected);
  });

  it('is in the OpenAPI document, as a REST route and as an RPC procedure', async () => {
    const doc = (await (await fetch(`${service.baseUrl}/api/openapi.json`)).json()) as any;
    expect(doc.paths['/api/v1/throwaways/{label}/echo'].post.operationId).toBe('throwaways.echo');
    const param = doc.paths['/api/rpc/{operation}'].post.parameters.find((p: { name: string }) => p.name === 'operation');
    expect(param.schema.enum).toContain('throwaways.echo');
  });

  it('is callable from the client by name', async () => {
    const client = createClient({ baseUrl: service.baseUrl, apiKey: key });
    expect(await client.call('throwaways.echo', { label: 'hello', times: 2, message: 'hi', tags: ['a'] })).toEqual(expected);
  });

  it('is a CLI command, with help', async () => {
    const env = { PROMOTIONS_URL: service.baseUrl, PROMOTIONS_API_KEY: key, XDG_CONFIG_HOME: '/nonexistent' };
    const result = await runCliProcess(['throwaways', 'echo', 'hello', '--message', 'hi', '--times', '2', '--tags', '["a"]'], env, { entry: CLI_WITH_THROWAWAY });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual(expected);
    const help = await runCliProcess(['--help'], env, { entry: CLI_WITH_THROWAWAY });
    expect(help.stdout).toContain('throwaways echo');
  });

  it('is an MCP tool, listed and callable', async () => {
    const client = new Client({ name: 'throwaway-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${service.baseUrl}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === 'throwaways_echo');
      expect(tool?.inputSchema.required).toEqual(expect.arrayContaining(['label', 'message']));
      expect(tool?.annotations?.readOnlyHint).toBe(true); // it needs only a read scope
      const result = await client.callTool({ name: 'throwaways_echo', arguments: { label: 'hello', times: 2, message: 'hi', tags: ['a'] } });
      expect(result.structuredContent).toEqual(expected);
    } finally {
      await client.close();
    }
  });
});
