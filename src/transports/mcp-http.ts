// MCP over streamable HTTP at /api/mcp (`?toolset=checkout` or `admin` lists fewer tools): stateless (a fresh
// server and transport per POST), the caller's Bearer key
// decides which tools it sees, and a tool call runs the operation in-process as RPC would.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Router, type RequestHandler } from 'express';
import { ProblemError } from '../contract/problems.js';
import { hasScope } from '../contract/scopes.js';
import { problemOf } from './error-mapping.js';
import type { OperationPipeline } from './execute-operation.js';
import { markOperation } from './request-observer.js';
import { createToolServer, parseToolsets, type ToolCallOutcome, type Toolset } from './mcp-tools.js';
import { actorOf, requestMetaOf } from './rest.js';

export const MCP_PATH = '/api/mcp';

export interface McpRouterOptions {
  pipeline: OperationPipeline;
  version: string;
  /** Body parsing and authentication, shared with the other faces. */
  guard: RequestHandler[];
}

export function mcpRouter(options: McpRouterOptions): Router {
  const router = Router();
  const { pipeline } = options;
  const operations = pipeline.operations;

  router.post('/', ...options.guard, async (req, res) => {
    markOperation(res, 'mcp.message');
    // Streamable HTTP answers JSON or an event stream: a client must accept both (the SDK would answer a bare
    // JSON-RPC error; the API's problem+json says the same to any HTTP client).
    const accept = String(req.headers.accept ?? '');
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      throw new ProblemError('not_acceptable', 'the MCP endpoint answers application/json or text/event-stream: send Accept: application/json, text/event-stream');
    }
    const actor = actorOf(res);
    const request = requestMetaOf(req);
    const call = async (operation: { name: string }, args: Record<string, unknown>): Promise<ToolCallOutcome> => {
      try {
        const bound = pipeline.find(operation.name);
        const { body } = await pipeline.execute(bound, actor, { kind: 'merged', value: args }, request, req.log);
        return { ok: true, output: body };
      } catch (error) {
        return { ok: false, problem: problemOf(error, req.log, { tool: operation.name }).toBody() };
      }
    };
    let toolsets: Toolset[];
    try {
      toolsets = parseToolsets(typeof req.query.toolset === 'string' ? req.query.toolset : undefined);
    } catch (error) {
      throw new ProblemError('invalid_request', (error as Error).message);
    }
    const server = createToolServer({
      operations,
      allowed: (op) => hasScope(actor.scopes, op.scope),
      call,
      version: options.version,
      toolsets,
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
  router.all('/', (_req, _res, next) => {
    next(new ProblemError('method_not_allowed', 'the MCP endpoint takes POST only (stateless streamable HTTP)', { headers: { Allow: 'POST' } }));
  });
  return router;
}
