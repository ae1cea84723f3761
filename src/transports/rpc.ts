// The RPC face: POST /api/rpc/{operation} runs any registered operation by name with its merged input as the JSON
// body; same auth, scopes, validation, outputs and problems as its REST twin. POST /api/rpc runs a batch of calls;
// GET /api/rpc describes the caller's view.
import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import type { Actor, RequestMeta } from '../contract/actor.js';
import { ProblemError, type ProblemBody } from '../contract/problems.js';
import { hasScope } from '../contract/scopes.js';
import { CLIENT_VERSION_HEADER, isCompatibleVersion, MAX_BATCH_CALLS, parseVersion, SERVER_VERSION_HEADER } from '../client/version.js';
import type { Logger } from '../platform/logger.js';
import { problemOf, zodIssuesToFieldErrors } from './error-mapping.js';
import { idempotencyHeader, type OperationPipeline } from './execute-operation.js';
import { markOperation } from './request-observer.js';
import { actorOf, requestMetaOf } from './rest.js';

export const RPC_PREFIX = '/api/rpc';

export interface RpcRouterOptions {
  pipeline: OperationPipeline;
  version: string;
  /** Body parsing and authentication, shared with the other faces. */
  guard: RequestHandler[];
}

/** A client that names its version must match the server's major.minor; one that names none is let through. */
export function versionHandshake(serverVersion: string): RequestHandler {
  return (req, res, next) => {
    res.setHeader(SERVER_VERSION_HEADER, serverVersion);
    const given = req.headers[CLIENT_VERSION_HEADER.toLowerCase()];
    if (given === undefined) return next();
    if (typeof given !== 'string' || !parseVersion(given)) {
      return next(
        new ProblemError('invalid_request', `${CLIENT_VERSION_HEADER} must be a version such as ${serverVersion}`, {
          errors: [{ path: `header.${CLIENT_VERSION_HEADER}`, message: 'not a semantic version' }],
        }),
      );
    }
    if (!isCompatibleVersion(given, serverVersion)) {
      return next(
        new ProblemError(
          'version_mismatch',
          `this client is version ${given} and the server ${serverVersion}; major and minor must match: ` +
            `use a client of version ${serverVersion.replace(/\.\d+(?:[-+].*)?$/, '.x')}`,
        ),
      );
    }
    next();
  };
}

const BatchCall = z.object({
  operation: z.string().min(1).max(200),
  input: z.record(z.string(), z.unknown()).optional(),
  idempotencyKey: z.string().min(1).max(255).optional(),
});
type BatchCall = z.infer<typeof BatchCall>;
const BatchBody = z.object({ calls: z.array(BatchCall).min(1).max(MAX_BATCH_CALLS) }).strict();

export type BatchResult = { status: number; output?: unknown } | { status: number; problem: ProblemBody };

function parseBatch(body: unknown): BatchCall[] {
  const parsed = BatchBody.safeParse(body ?? {});
  if (!parsed.success) throw new ProblemError('invalid_request', 'a batch is { calls: [{ operation, input?, idempotencyKey? }] } with 1..' + MAX_BATCH_CALLS + ' calls', { errors: zodIssuesToFieldErrors(parsed.error, '') });
  return parsed.data.calls;
}

interface BatchContext {
  actor: Actor;
  request: RequestMeta;
  log: Logger;
}

async function runBatchCall(pipeline: OperationPipeline, call: BatchCall, ctx: BatchContext): Promise<BatchResult> {
  try {
    const bound = pipeline.find(call.operation);
    const raw = { kind: 'merged' as const, value: call.input ?? {}, idempotencyKey: call.idempotencyKey };
    const { status, body } = await pipeline.execute(bound, ctx.actor, raw, ctx.request, ctx.log);
    return status === 204 ? { status } : { status, output: body };
  } catch (error) {
    const problem = problemOf(error, ctx.log, { operation: call.operation });
    return { status: problem.status, problem: problem.toBody() };
  }
}

export function rpcRouter(options: RpcRouterOptions): Router {
  const router = Router();
  const { pipeline } = options;
  router.use(versionHandshake(options.version));
  router.use(...options.guard);

  router.get('/', (_req, res) => {
    markOperation(res, 'rpc.describe');
    const actor = actorOf(res);
    res.json({
      version: options.version,
      workspaceId: actor.workspaceId,
      scopes: actor.scopes,
      operations: pipeline.operations
        .filter((op) => hasScope(actor.scopes, op.scope))
        .map((op) => ({ name: op.name, method: op.method, scope: op.scope, summary: op.summary, idempotent: Boolean(op.idempotent) })),
    });
  });

  router.post('/:operation', async (req, res) => {
    const name = req.params.operation as string;
    const bound = pipeline.find(name, `; GET ${RPC_PREFIX} lists them`);
    markOperation(res, bound.operation.name);
    const raw = { kind: 'merged' as const, value: req.body, idempotencyKey: idempotencyHeader(req) };
    const { status, body } = await pipeline.execute(bound, actorOf(res), raw, requestMetaOf(req), req.log);
    if (status === 204) res.status(204).end();
    else res.status(status).json(body);
  });

  router.post('/', async (req, res) => {
    markOperation(res, 'rpc.batch');
    const calls = parseBatch(req.body);
    const ctx = { actor: actorOf(res), request: requestMetaOf(req), log: req.log };
    // One after another, in the order given: a later call sees what an earlier one did (e.g. a duplicate code
    // fails on its second row, not on whichever ran first). Clients get throughput from several batches in flight.
    const results: BatchResult[] = [];
    for (const call of calls) results.push(await runBatchCall(pipeline, call, ctx));
    res.json({ results });
  });

  router.all(['/', '/:operation'], (req, _res, next) => {
    const allow = req.path === '/' ? 'GET, POST' : 'POST';
    next(new ProblemError('method_not_allowed', `${req.method} is not allowed here; use ${allow}`, { headers: { Allow: allow } }));
  });
  return router;
}

/** The RPC and MCP endpoints as OpenAPI path items (zod-openapi input), listed beside the REST routes. */
export function rpcPathItems(operationNames: readonly string[], problem: z.ZodType, mcpPath: string, serverVersion: string) {
  const problemResponse = (description: string) => ({ description, content: { 'application/problem+json': { schema: problem } } });
  const common = {
    '400': problemResponse('Malformed input (`invalid_request`), or a client whose major.minor differs from the server (`version_mismatch`)'),
    '401': problemResponse('Missing, unknown or revoked API key (`unauthorized`)'),
    '500': problemResponse('Internal error (`internal_error`); never carries a stack'),
  };
  // Declared as exactly the versions the server accepts (its major.minor, any patch), so that a request that
  // conforms to the document is never refused; any other value is 400 (`version_mismatch` or `invalid_request`).
  const compatible = serverVersion.replace(/^(\d+)\.(\d+)\..*$/, '$1\\.$2');
  const versionHeader = z.object({
    'x-client-version': z
      .string()
      .regex(new RegExp(`^${compatible}\\.(0|[1-9]\\d{0,8})(?:[-+][0-9A-Za-z.+-]{1,64})?$`))
      .optional()
      .meta({
        description: 'The calling client\'s version; when sent, its major.minor must equal the server\'s (info.version), else 400 `version_mismatch`.',
      }),
  });
  return {
    [RPC_PREFIX]: {
      get: {
        operationId: 'rpc.describe',
        summary: 'The server version, the key\'s scopes and the operations it may call',
        tags: ['RPC'],
        security: [{ apiKey: [] }],
        requestParams: { header: versionHeader },
        responses: {
          '200': {
            description: 'What this key may call',
            content: {
              'application/json': {
                schema: z.object({
                  version: z.string(),
                  workspaceId: z.string(),
                  scopes: z.array(z.string()),
                  operations: z.array(z.object({ name: z.string(), method: z.string(), scope: z.string(), summary: z.string(), idempotent: z.boolean() })),
                }),
              },
            },
          },
          ...common,
        },
      },
      post: {
        operationId: 'rpc.batch',
        summary: 'Run up to ' + MAX_BATCH_CALLS + ' calls in one request, in order',
        description: 'Each call gets its own status and output or problem; nothing is atomic across calls. A malformed batch is 400 as a whole.',
        tags: ['RPC'],
        security: [{ apiKey: [] }],
        requestParams: { header: versionHeader },
        requestBody: { required: true, content: { 'application/json': { schema: BatchBody } } },
        responses: {
          '200': {
            description: 'One result per call, in order',
            content: {
              'application/json': {
                schema: z.object({ results: z.array(z.object({ status: z.number().int(), output: z.unknown().optional(), problem: problem.optional() })) }),
              },
            },
          },
          ...common,
        },
      },
    },
    [`${RPC_PREFIX}/{operation}`]: {
      post: {
        operationId: 'rpc.call',
        summary: 'Run any operation by name',
        description:
          'The body is the operation\'s input as one JSON object: its path, query and body fields together (an unknown field is 400). ' +
          'The answer is exactly its REST twin\'s: status, output or problem. Idempotent operations take the Idempotency-Key header too.',
        tags: ['RPC'],
        security: [{ apiKey: [] }],
        requestParams: {
          path: z.object({ operation: z.enum(operationNames as [string, ...string[]]).meta({ description: 'The operation name, e.g. vouchers.create.' }) }),
          header: versionHeader.extend({ 'idempotency-key': z.string().min(1).max(255).optional() }),
        },
        requestBody: { required: false, content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
        responses: {
          '200': { description: 'The operation\'s output', content: { 'application/json': { schema: z.unknown() } } },
          '201': { description: 'Created: the operation\'s output', content: { 'application/json': { schema: z.unknown() } } },
          '202': { description: 'Accepted, going on in the background (a bulk import): the operation\'s output', content: { 'application/json': { schema: z.unknown() } } },
          '204': { description: 'Done; no body' },
          ...common,
          '403': problemResponse('The key lacks the operation\'s scope (`forbidden`)'),
          '404': problemResponse('No such operation, or no such resource (`not_found`)'),
          '409': problemResponse('Conflict (`conflict`, `idempotency_conflict`)'),
        },
      },
    },
    [mcpPath]: {
      post: {
        operationId: 'mcp.message',
        summary: 'Model Context Protocol (streamable HTTP, stateless): the operations as tools',
        description:
          'JSON-RPC messages of MCP. Tools are the operations the key\'s scopes allow; reads are marked readOnlyHint. ' +
          '`toolset=checkout` lists only validate, redeem, stack (and its preview), rollback, qualification and customer lookup; `admin` the rest.',
        tags: ['MCP'],
        security: [{ apiKey: [] }],
        requestParams: {
          query: z.object({ toolset: z.string().regex(/^(checkout|admin)(,(checkout|admin))*$/).optional() }),
          header: z.object({ accept: z.string().regex(/application\/json.*text\/event-stream|text\/event-stream.*application\/json/) }),
        },
        requestBody: { required: true, content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
        responses: {
          '200': { description: 'The JSON-RPC answer', content: { 'application/json': { schema: z.unknown() } } },
          '202': { description: 'Accepted (a notification or response)' },
          '406': problemResponse('The Accept header lacks application/json or text/event-stream (`not_acceptable`)'),
          ...common,
        },
      },
    },
  };
}
