// Assembles the express app: /metrics, request timing, request context, health, OpenAPI document, then the faces
// (/api/v1 REST, RPC, MCP), every one of which runs operations through the one pipeline it is given.
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type RequestHandler } from 'express';
import typeis from 'type-is';
import { ProblemError } from '../contract/problems.js';
import { hasRequestContent, JSON_TYPES, parseJsonBody } from '../platform/http-request.js';
import type { Logger } from '../platform/logger.js';
import type { OperationPipeline } from '../transports/execute-operation.js';
import { MCP_PATH, mcpRouter } from '../transports/mcp-http.js';
import { API_PREFIX } from '../transports/openapi-document.js';
import { restRoutes, scopeChecks } from '../transports/rest.js';
import { markedOperation, NO_OBSERVER, type RequestObserver } from '../transports/request-observer.js';
import { RPC_PREFIX, rpcRouter } from '../transports/rpc.js';
import { authenticate } from './authenticate.js';
import { DASHBOARD_PATH, dashboardRoutes, sessionCookieRoutes } from './dashboard.js';
import { healthRoutes, type ReadinessCheck } from './health.js';
import { notFoundHandler, problemHandler } from './problem-handler.js';
import { requestContext } from './request-context.js';
import type { RestFace } from './rest-face.js';
import { streamedBodyRoutes } from './streamed-body.js';
import { IMPORT_MAX_BYTES_DEFAULT } from '../config.js';

export interface AppOptions {
  pipeline: OperationPipeline;
  log: Logger;
  version: string;
  maxBodyBytes: number;
  /** Bodies streamed as CSV or NDJSON (bulk imports) have their own limit (IMPORT_MAX_BYTES). */
  importMaxBytes?: number | undefined;
  readinessChecks: Record<string, ReadinessCheck>;
  /** GET /metrics (absent: metrics are off). */
  metrics?: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  /** The REST face (document and request validator) built for the pipeline's operations: see startWebService. */
  restFace: RestFace;
}

/** Each request's operation, status and duration, told to the observer when its response closes. */
function observeRequests(observer: RequestObserver): RequestHandler {
  return (_req, res, next) => {
    const started = performance.now();
    res.once('close', () => observer.answered(markedOperation(res), res.statusCode, (performance.now() - started) / 1000));
    next();
  };
}

const requireJsonBody: RequestHandler = (req, _res, next) => {
  // `Content-Length: 0` (what fetch sends for a bodiless POST) is no body, whatever its type says.
  if (hasRequestContent(req) && !typeis(req, JSON_TYPES)) {
    next(new ProblemError('unsupported_media_type', 'send the body as application/json'));
    return;
  }
  next();
};

// The body arrives as bytes and is decoded by the same function as on the hot path (UTF-8 only, BOM dropped).
const decodeJsonBody: RequestHandler = (req, _res, next) => {
  if (Buffer.isBuffer(req.body)) req.body = parseJsonBody(req, req.body);
  next();
};

export function createApp(options: AppOptions): express.Express {
  const { pipeline } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const face = options.restFace;
  const { document } = face;
  const guard = [
    requireJsonBody,
    express.raw({ limit: options.maxBodyBytes, type: JSON_TYPES }),
    decodeJsonBody,
    authenticate((caller) => pipeline.admit(caller)),
  ];

  // Scrapes are neither timed nor logged.
  if (options.metrics) app.get('/metrics', options.metrics);
  if (pipeline.observer !== NO_OBSERVER) app.use(observeRequests(pipeline.observer));
  app.use(requestContext(options.log));
  app.use(healthRoutes(options.version, options.readinessChecks));
  app.get('/api/openapi.json', (_req, res) => {
    res.json(document);
  });

  // The session routes' cookie face answers before the REST face (sign-in needs no credentials); the dashboard's files.
  app.use(API_PREFIX, sessionCookieRoutes({ pipeline, maxBodyBytes: options.maxBodyBytes }));
  app.use(DASHBOARD_PATH, dashboardRoutes());

  // The exception to the JSON-only rule: bulk imports stream CSV or NDJSON up to their own limit.
  app.use(API_PREFIX, streamedBodyRoutes(pipeline, { maxBytes: options.importMaxBytes ?? IMPORT_MAX_BYTES_DEFAULT }));

  const api = express.Router();
  api.use(...guard);
  api.use(scopeChecks(pipeline));
  api.use(...face.validator);
  api.use(restRoutes(pipeline));
  app.use(API_PREFIX, api);

  // The RPC and MCP faces: same body rules and credentials as REST; they validate with the operations' zod schemas.
  app.use(RPC_PREFIX, rpcRouter({ pipeline, version: options.version, guard }));
  app.use(MCP_PATH, mcpRouter({ pipeline, version: options.version, guard }));

  app.use(notFoundHandler);
  app.use(problemHandler);
  return app;
}
