// The MCP face: one tool per registry operation (JSON Schema of its merged input, annotations by method).
// Pure contract + SDK, so the stdio server of the CLI and the HTTP endpoint of the service share it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Operation } from '../contract/operation.js';
import type { ProblemBody } from '../contract/problems.js';
import { NO_SCOPE } from '../contract/scopes.js';

export type ToolCallOutcome = { ok: true; output: unknown } | { ok: false; problem: ProblemBody };

export interface ToolServerOptions {
  operations: readonly Operation[];
  /** Tools listed to this caller: the operations its API key's scopes allow. */
  allowed: (operation: Operation) => boolean;
  /** Runs the operation with the raw tool arguments; the callee validates them exactly as REST and RPC do. */
  call: (operation: Operation, args: Record<string, unknown>) => Promise<ToolCallOutcome>;
  version: string;
  /** The toolsets listed (default: all). */
  toolsets?: readonly Toolset[];
}

const INSTRUCTIONS =
  'Tools are the operations of a promotions service (campaigns, vouchers, gift cards, customers, redemptions, ...). ' +
  'Money is in integer minor units (cents). Lists return { data, next? }: pass `next` as `cursor` for the next page. ' +
  'Business refusals (e.g. a voucher that cannot be redeemed) are normal results with ok/valid false and a code. ' +
  'Ids are UUIDs (format uuid); instants are RFC 3339 date-times (format date-time).';

/**
 * Toolsets an agent host picks from: `checkout` is what a checkout agent needs (decide, redeem, roll back, find the
 * customer), `admin` the rest. Either way only the operations the caller's scopes allow are listed.
 */
export const TOOLSETS = ['checkout', 'admin'] as const;
export type Toolset = (typeof TOOLSETS)[number];
const CHECKOUT: ReadonlySet<string> = new Set([
  'vouchers.validate', 'redemptions.redeem', 'redemptions.stack', 'redemptions.validateStack', 'redemptions.releaseSession', 'redemptions.rollback',
  'redemptions.get', 'promotions.validate', 'promotions.redeemTier', 'qualifications.check', 'customers.get', 'customers.list',
]);

export function toolsetOf(operation: Pick<Operation, 'name'>): Toolset {
  return CHECKOUT.has(operation.name) ? 'checkout' : 'admin';
}

/** `checkout,admin` → the toolsets named; undefined or empty → all. Throws on an unknown name. */
export function parseToolsets(value: string | undefined): Toolset[] {
  const names = (value ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  if (!names.length) return [...TOOLSETS];
  const unknown = names.filter((n) => !(TOOLSETS as readonly string[]).includes(n));
  if (unknown.length) throw new RangeError(`unknown toolset ${unknown.join(', ')}: choose from ${TOOLSETS.join(', ')}`);
  return names as Toolset[];
}

type JsonNode = Record<string, unknown>;
const DATA_KEYWORDS: ReadonlySet<string> = new Set(['default', 'const', 'enum', 'examples']);

/**
 * A tool's input schema as every host reads it: references to `$defs` inlined (some hosts do not resolve them),
 * `pattern` left out where a `format` says the same (the UUID pattern alone was repeated about a hundred times;
 * the instructions say ids are UUIDs once), and only standard keywords (`example` becomes `examples`).
 */
export function leanSchema(schema: JsonNode): JsonNode {
  const defs = (schema.$defs ?? {}) as Record<string, JsonNode>;
  const visit = (node: unknown, resolving: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, resolving));
    if (!node || typeof node !== 'object') return node;
    const object = node as JsonNode;
    const ref = typeof object.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(object.$ref)?.[1] : undefined;
    if (ref !== undefined) {
      const { $ref: _ref, ...siblings } = object;
      // A recursive type cannot be inlined for ever: its inner occurrence is left open (any value).
      if (resolving.includes(ref) || !defs[ref]) return { ...(visit(siblings, resolving) as JsonNode) };
      return { ...(visit(defs[ref], [...resolving, ref]) as JsonNode), ...(visit(siblings, resolving) as JsonNode) };
    }
    const out: JsonNode = {};
    for (const [key, value] of Object.entries(object)) {
      // Vendor extensions (`x-secret` marks) are for the server's own use.
      if (key === '$defs' || key === '$schema' || key === 'id' || key.startsWith('x-')) continue;
      if (key === 'pattern' && typeof object.format === 'string') continue;
      if (key === 'example') {
        if (!('examples' in object)) out.examples = [value];
        continue;
      }
      if (key === 'examples' && 'example' in object) continue;
      // Values are data, not schemas: copied as they are.
      if (DATA_KEYWORDS.has(key)) {
        out[key] = value;
        continue;
      }
      // Property names are data, not keywords: keep them all, and visit their schemas.
      out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as JsonNode).map(([name, sub]) => [name, visit(sub, resolving)])) : visit(value, resolving);
    }
    return out;
  };
  return visit(schema, []) as JsonNode;
}

const inputSchemas = new WeakMap<Operation, Tool['inputSchema']>();
const outputSchemas = new WeakMap<Operation, Tool['outputSchema'] | null>();

/** The field a business decision is discriminated on (`ok`, or `valid` for a validation), when the output is one. */
function decisionFieldOf(operation: Operation): string | undefined {
  const def = (operation.output as { _zod?: { def?: { type?: string; discriminator?: unknown } } } | undefined)?._zod?.def;
  return def?.type === 'union' && (def.discriminator === 'ok' || def.discriminator === 'valid') ? def.discriminator : undefined;
}

/**
 * One branch of a decision, one level deep: its fields with their types (the discriminator as a `const`), which are
 * required, its description. Nested shapes are the REST document's to detail; repeating them in every checkout tool
 * doubled the toolset. Open to fields a later version adds, so a host validating results does not reject them.
 */
function branchOutline(branch: JsonNode): JsonNode {
  const outline = ([name, field]: [string, JsonNode]): [string, JsonNode] => {
    if ('const' in field) return [name, { const: field.const }];
    const type = field.type ?? (Array.isArray(field.anyOf) ? 'object' : undefined);
    return [name, type === undefined ? {} : { type }];
  };
  return {
    type: 'object',
    ...(typeof branch.description === 'string' ? { description: branch.description } : {}),
    properties: Object.fromEntries(Object.entries((branch.properties ?? {}) as Record<string, JsonNode>).map(outline)),
    required: branch.required ?? [],
  };
}

/** A tool error's structured content: the service's problem (hosts validate structured content of errors too). */
const PROBLEM_RESULT = {
  type: 'object',
  description: 'A tool error (isError): the RFC 9457 problem the service answered.',
  properties: { problem: { type: 'object' } },
  required: ['problem'],
};

/**
 * Business decisions declare their output: the union on `ok` / `valid` as `oneOf`, inlined like the inputs, so a host
 * (or the model) sees that a refusal carries `code` and a success what was done. Other tools declare none (leaner).
 */
function outputSchemaOf(operation: Operation): Tool['outputSchema'] {
  let schema = outputSchemas.get(operation);
  if (schema === undefined) {
    const field = decisionFieldOf(operation);
    if (field === undefined) schema = null;
    else {
      const { oneOf, description } = leanSchema(z.toJSONSchema(operation.output!, { io: 'output', unrepresentable: 'any' }) as JsonNode) as {
        oneOf: JsonNode[];
        description?: string;
      };
      schema = { type: 'object', ...(description ? { description } : {}), oneOf: [...oneOf.map(branchOutline), PROBLEM_RESULT] } as Tool['outputSchema'];
    }
    outputSchemas.set(operation, schema);
  }
  return schema ?? undefined;
}

function inputSchemaOf(operation: Operation): Tool['inputSchema'] {
  let schema = inputSchemas.get(operation);
  if (!schema) {
    const json = z.toJSONSchema(operation.input, { io: 'input', unrepresentable: 'any' }) as JsonNode;
    schema = { ...leanSchema(json), type: 'object' } as Tool['inputSchema'];
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
    ...(outputSchemaOf(operation) ? { outputSchema: outputSchemaOf(operation) } : {}),
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
  const toolsets = new Set(options.toolsets ?? TOOLSETS);
  // Operations anyone may call (signing in to the dashboard, accepting an invitation) are not tools for a keyed agent.
  const chosen = options.operations.filter((op) => op.scope !== NO_SCOPE && toolsets.has(toolsetOf(op)));
  const listed = chosen.filter(options.allowed);
  // A host that chose the checkout toolset cannot reach an admin tool by name; a tool the key's scopes do not
  // allow is called all the same, and the service answers its 403 problem as a tool error.
  const byName = new Map(chosen.map((op) => [toolNameOf(op.name), op]));
  // Tools come from the registry as JSON Schemas, so the low-level handlers are used rather than registerTool.
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: listed.map(toolOf),
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
