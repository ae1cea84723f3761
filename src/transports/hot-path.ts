// A lean face for the hot routes (operations declared `hot`: validate, redeem, stack, rollback, qualification,
// tiers), in front of express on the same server. It runs the same operation pipeline as every other face (actor,
// scope, zod-parsed input, handler, problem mapping) and skips only express's routing layers, which cap the hot path
// near 4,000 req/s on 2 cores. Every other route falls through to express.
// test/redemptions/hot-path.test.ts runs one suite against both.
import type { IncomingMessage, ServerResponse } from 'node:http';
import typeis from 'type-is';
import type { BoundHandler } from '../contract/handler.js';
import { invalidField, ProblemError } from '../contract/problems.js';
import { decodeJsonText, hasRequestContent, JSON_TYPES, requestIdOf, requestOrigin } from '../platform/http-request.js';
import { problemOf } from './error-mapping.js';
import { idempotencyHeader, type OperationPipeline } from './execute-operation.js';
import { API_PREFIX } from './openapi-document.js';

interface Route {
  pattern: RegExp;
  names: string[];
  bound: BoundHandler;
}

export interface HotPathOptions {
  pipeline: OperationPipeline;
  maxBodyBytes: number;
}

export type HotPathDispatcher = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Returns a function that serves a request when it is a hot route (true), or leaves it alone (false). */
export function createHotPathDispatcher(options: HotPathOptions): HotPathDispatcher {
  const routes: Route[] = options.pipeline.handlers
    .filter((h) => h.operation.hot && h.operation.method === 'post')
    .map((bound) => {
      const names: string[] = [];
      const source = (API_PREFIX + bound.operation.path).replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      return { pattern: new RegExp(`^${source}/?$`), names, bound };
    });

  return (req, res) => {
    if (req.method !== 'POST' || !req.url?.startsWith(API_PREFIX)) return false;
    const queryAt = req.url.indexOf('?');
    const path = queryAt === -1 ? req.url : req.url.slice(0, queryAt);
    for (const route of routes) {
      const match = route.pattern.exec(path);
      if (match) {
        void serve(route, match, req, res, options);
        return true;
      }
    }
    return false;
  };
}

async function serve(route: Route, match: RegExpExecArray, req: IncomingMessage, res: ServerResponse, options: HotPathOptions): Promise<void> {
  const started = performance.now();
  const requestId = requestIdOf(req);
  res.setHeader('X-Request-Id', requestId);
  const operation = route.bound.operation;
  const { pipeline } = options;
  // Bindings go on the log lines themselves: a child logger per request costs more than the rest of a validate.
  const log = pipeline.deps.log;
  const context: Record<string, unknown> = { reqId: requestId, operation: operation.name };
  try {
    const body = await readJsonBody(req, options.maxBodyBytes);
    const origin = requestOrigin(req);
    const { actor, headers } = await pipeline.admit({ credentials: origin.credentials, address: origin.ip });
    // Set before anything can fail, so every answer to an admitted caller reports its limit.
    if (headers) for (const name in headers) res.setHeader(name, headers[name]!);
    context.workspaceId = actor.workspaceId;
    pipeline.authorize(operation, actor);
    if (body === undefined) throw invalidField('body', 'this operation needs a JSON body');
    const params: Record<string, string> = {};
    route.names.forEach((name, i) => {
      try {
        params[name] = decodeURIComponent(match[i + 1]!);
      } catch {
        throw invalidField(`path.${name}`, 'is not a valid URL-encoded value');
      }
    });
    const parts = { params, body, idempotencyKey: idempotencyHeader(req) };
    const request = { requestId, ip: origin.ip, userAgent: origin.userAgent };
    const result = await pipeline.execute(route.bound, actor, { kind: 'parts', parts }, request, log);
    send(res, result.status, 'application/json; charset=utf-8', JSON.stringify(result.body));
  } catch (error) {
    const shown = problemOf(error, log, context);
    for (const [name, value] of Object.entries(shown.headers ?? {})) res.setHeader(name, value);
    send(res, shown.status, 'application/problem+json; charset=utf-8', JSON.stringify(shown.toBody()));
    // A body we stopped reading (too large) must not be read as the next request.
    if (shown.code === 'payload_too_large') req.resume();
  }
  const elapsed = performance.now() - started;
  pipeline.observer.answered(operation.name, res.statusCode, elapsed / 1000);
  const level = res.statusCode === 500 ? 'error' : res.statusCode >= 500 ? 'warn' : 'info';
  if (log.isLevelEnabled(level)) log[level]({ ...context, req: { id: requestId, method: req.method, url: req.url }, res: { statusCode: res.statusCode }, responseTime: Math.round(elapsed) }, 'request completed');
}

function send(res: ServerResponse, status: number, type: string, payload: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(payload) });
  res.end(payload);
}

/** The JSON body (an object or array, as express.json strict), undefined when there is none; problems as express gives them. */
function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  if (!hasRequestContent(req)) {
    req.resume();
    return Promise.resolve(undefined);
  }
  // The type nearly every client sends is taken without type-is's parse (~2.5 % of a validate's web thread).
  if (req.headers['content-type'] !== 'application/json' && !typeis(req, JSON_TYPES)) {
    req.resume();
    return Promise.reject(new ProblemError('unsupported_media_type', 'send the body as application/json'));
  }
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(new ProblemError('payload_too_large', 'request entity too large'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new ProblemError('payload_too_large', 'request entity too large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', (error) => {
      if (!failed) reject(new ProblemError('invalid_request', `the body could not be read: ${error.message}`));
      failed = true;
    });
    req.on('end', () => {
      if (failed) return;
      const text = decodeJsonText(req, Buffer.concat(chunks), reject);
      const first = text.trimStart()[0];
      if (first !== '{' && first !== '[') {
        reject(new ProblemError('invalid_request', 'the body is not valid JSON'));
        return;
      }
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new ProblemError('invalid_request', 'the body is not valid JSON'));
      }
    });
  });
}
