// MCP over streamable HTTP at /api/mcp: stateless (a fresh server and transport per POST), the caller's Bearer key
// decides which tools it sees, and a tool call runs the operation in-process as RPC would.
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Router, type RequestHandler } from 'express';
import type { AuthContext, BoundHandler, ServiceDeps } from '../contract/handler.js';
import { PROBLEMS, ProblemError } from '../contract/problems.js';
import { hasScope } from '../contract/scopes.js';
import { toProblem } from '../http/problem-handler.js';
import { createToolServer, type ToolCallOutcome } from './mcp-tools.js';
import { assertScope, parseMergedInput, runParsedOperation } from './run-operation.js';

export const MCP_PATH = '/api/mcp';

export interface McpRouterOptions {
  handlers: readonly BoundHandler[];
  deps: ServiceDeps;
  version: string;
  /** Body parsing and authentication, shared with the other faces. */
  guard: RequestHandler[];
}

export function mcpRouter(options: McpRouterOptions): Router {
  const router = Router();
  const byName = new Map(options.handlers.map((h) => [h.operation.name, h]));
  const operations = options.handlers.map((h) => h.operation);

  router.post('/', ...options.guard, async (req, res) => {
    const auth = res.locals.auth as AuthContext;
    const call = async (operation: { name: string }, args: Record<string, unknown>): Promise<ToolCallOutcome> => {
      try {
        const bound = byName.get(operation.name)!;
        assertScope(bound.operation, auth);
        const input = parseMergedInput(bound.operation, args);
        const { body } = await runParsedOperation(bound, input, { auth, deps: options.deps, log: req.log });
        return { ok: true, output: body };
      } catch (error) {
        const known = toProblem(error);
        if (!known) req.log.error({ err: error, tool: operation.name }, 'MCP tool call failed');
        return { ok: false, problem: (known ?? new ProblemError('internal_error', PROBLEMS.internal_error.title)).toBody() };
      }
    };
    const server = createToolServer({
      operations,
      allowed: (op) => hasScope(auth.scopes, op.scope),
      call,
      version: options.version,
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
