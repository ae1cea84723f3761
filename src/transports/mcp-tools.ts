// The MCP face: one tool per registry operation (JSON Schema of its merged input, annotations by method).
// Pure contract + SDK, so the stdio server of the CLI and the HTTP endpoint of the service share it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Operation } from '../contract/operation.js';
import type { ProblemBody } from '../contract/problems.js';

export type ToolCallOutcome = { ok: true; output: unknown } | { ok: false; problem: ProblemBody };

export interface ToolServerOptions {
  operations: readonly Operation[];
  /** Tools listed to this caller: the operations its API key's scopes allow. */
  allowed: (operation: Operation) => boolean;
  /** Runs the operation with the raw tool arguments; the callee validates them exactly as REST and RPC do. */
  call: (operation: Operation, args: Record<string, unknown>) => Promise<ToolCallOutcome>;
  version: string;
}

const INSTRUCTIONS =
  'Tools are the operations of a promotions service (campaigns, vouchers, gift cards, customers, redemptions, ...). ' +
  'Money is in integer minor units (cents). Lists return { data, next? }: pass `next` as `cursor` for the next page. ' +
  'Business refusals (e.g. a voucher that cannot be redeemed) are normal results with ok/valid false and a code.';

const inputSchemas = new WeakMap<Operation, Tool['inputSchema']>();

function inputSchemaOf(operation: Operation): Tool['inputSchema'] {
  let schema = inputSchemas.get(operation);
  if (!schema) {
    const { $schema: _dialect, ...json } = z.toJSONSchema(operation.input, { io: 'input', unrepresentable: 'any' });
    schema = { ...json, type: 'object' } as Tool['inputSchema'];
    inputSchemas.set(operation, schema);
  }
  return schema;
}

/**
 * `vouchers.create` → `vouchers_create`: agent hosts and model APIs commonly accept tool names of `[A-Za-z0-9_-]`
 * only. Operation names are `<group>.<verb>` in letters, so the mapping is one-to-one.
 */
export function toolNameOf(operationName: string): string {
  return operationName.replace('.', '_');
}

export function toolOf(operation: Operation): Tool {
  // A read scope can only read (vouchers.validate is a POST that commits nothing).
  const readOnly = operation.method === 'get' || operation.scope.endsWith(':read');
  return {
    name: toolNameOf(operation.name),
    title: operation.summary,
    description: [
      operation.summary + '.',
      operation.description,
      `Operation ${operation.name}; needs the ${operation.scope} scope. REST twin: ${operation.method.toUpperCase()} /api/v1${operation.path}.`,
    ]
      .filter(Boolean)
      .join('\n\n'),
    inputSchema: inputSchemaOf(operation),
    annotations: {
      title: operation.summary,
      readOnlyHint: readOnly,
      // POST creates or acts (additive); PATCH, PUT and DELETE change or remove what exists.
      destructiveHint: !readOnly && operation.method !== 'post',
      idempotentHint: readOnly || operation.method === 'put' || operation.method === 'delete' || Boolean(operation.idempotent),
      openWorldHint: false,
    },
  };
}

function resultOf(outcome: ToolCallOutcome): CallToolResult {
  if (!outcome.ok) {
    return {
      isError: true,
      content: [{ type: 'text', text: JSON.stringify(outcome.problem, null, 2) }],
      structuredContent: { problem: outcome.problem },
    };
  }
  if (outcome.output === undefined) return { content: [{ type: 'text', text: 'Done (no content).' }] };
  const isObject = typeof outcome.output === 'object' && outcome.output !== null && !Array.isArray(outcome.output);
  return {
    content: [{ type: 'text', text: JSON.stringify(outcome.output, null, 2) }],
    ...(isObject ? { structuredContent: outcome.output as Record<string, unknown> } : {}),
  };
}

export function createToolServer(options: ToolServerOptions): McpServer {
  const server = new McpServer({ name: 'promotions', version: options.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const byName = new Map(options.operations.map((op) => [toolNameOf(op.name), op]));
  // Tools come from the registry as JSON Schemas, so the low-level handlers are used rather than registerTool.
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: options.operations.filter(options.allowed).map(toolOf),
  }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const operation = byName.get(request.params.name);
    if (!operation) throw new McpError(ErrorCode.InvalidParams, `no tool named ${request.params.name}`);
    try {
      return resultOf(await options.call(operation, request.params.arguments ?? {}));
    } catch (error) {
      return { isError: true, content: [{ type: 'text', text: `the call failed: ${(error as Error).message}` }] };
    }
  });
  return server;
}
