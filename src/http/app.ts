// Assembles the express app: request context, health, OpenAPI document, then /api/v1 (body, auth, validation, routes).
import express, { type RequestHandler } from 'express';
import typeis from 'type-is';
import type { BoundHandler, ServiceDeps } from '../contract/handler.js';
import { ProblemError } from '../contract/problems.js';
import type { Operation } from '../contract/operation.js';
import { verifyApiKeyCached } from '../domains/access/index.js';
import { API_PREFIX, buildOpenApiDocument } from '../transports/openapi-document.js';
import { requestValidator } from '../transports/request-validator.js';
import { restRoutes, scopeChecks } from '../transports/rest.js';
import { MCP_PATH, mcpRouter } from '../transports/mcp-http.js';
import { RPC_PREFIX, rpcRouter } from '../transports/rpc.js';
import { authenticate } from './authenticate.js';
import { healthRoutes, type ReadinessCheck } from './health.js';
import { hasRequestContent, notFoundHandler, problemHandler } from './problem-handler.js';
import { JSON_TYPES, requestContext } from './request-context.js';

export interface AppOptions {
  deps: ServiceDeps;
  operations: readonly Operation[];
  handlers: readonly BoundHandler[];
  version: string;
  maxBodyBytes: number;
  readinessChecks: Record<string, ReadinessCheck>;
}


const requireJsonBody: RequestHandler = (req, _res, next) => {
  // `Content-Length: 0` (what fetch sends for a bodiless POST) is no body, whatever its type says.
  if (hasRequestContent(req) && !typeis(req, JSON_TYPES)) {
    next(new ProblemError('unsupported_media_type', 'send the body as application/json'));
    return;
  }
  next();
};

export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const document = buildOpenApiDocument(options.operations, options.version);

  app.use(requestContext(options.deps.log));
  app.use(healthRoutes(options.version, options.readinessChecks));
  app.get('/api/openapi.json', (_req, res) => {
    res.json(document);
  });

  const api = express.Router();
  api.use(requireJsonBody);
  api.use(express.json({ limit: options.maxBodyBytes, type: JSON_TYPES, strict: true }));
  api.use(authenticate(options.deps.db, verifyApiKeyCached));
  api.use(scopeChecks(options.handlers));
  api.use(requestValidator(document));
  api.use(restRoutes(options.handlers, options.deps));
  app.use(API_PREFIX, api);

  // The RPC and MCP faces: same body rules and Bearer keys as REST; they validate with the operations' zod schemas.
  const guard = [
    requireJsonBody,
    express.json({ limit: options.maxBodyBytes, type: JSON_TYPES, strict: true }),
    authenticate(options.deps.db, verifyApiKeyCached),
  ];
  const faceOptions = { handlers: options.handlers, deps: options.deps, version: options.version, guard };
  app.use(RPC_PREFIX, rpcRouter(faceOptions));
  app.use(MCP_PATH, mcpRouter(faceOptions));

  app.use(notFoundHandler);
  app.use(problemHandler);
  return app;
}
