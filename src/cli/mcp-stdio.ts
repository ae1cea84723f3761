// `promotions mcp`: the MCP tool server on stdio, talking to the service through the client library (RPC).
// Tools are the operations the key's scopes allow, as the service itself reports them.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ApiError, CLIENT_VERSION, type PromotionsClient } from '../client/index.js';
import type { Operation } from '../contract/operation.js';
import { createToolServer, type Toolset } from '../transports/mcp-tools.js';

export async function serveMcpOverStdio(client: PromotionsClient, operations: readonly Operation[], toolsets?: readonly Toolset[]): Promise<void> {
  // Fails fast (and clearly) on a wrong key, an unreachable service or a version mismatch.
  const description = await client.describe();
  const allowed = new Set(description.operations.map((op) => op.name));
  const server = createToolServer({
    operations,
    allowed: (op) => allowed.has(op.name),
    version: CLIENT_VERSION,
    ...(toolsets ? { toolsets } : {}),
    call: async (operation, args) => {
      try {
        return { ok: true, output: await client.call(operation.name, args) };
      } catch (error) {
        if (error instanceof ApiError) return { ok: false, problem: error.toProblem() as never };
        throw error;
      }
    },
  });
  const closed = new Promise<void>((resolve) => (server.server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  process.stdin.once('end', () => void server.close());
  await closed;
}
