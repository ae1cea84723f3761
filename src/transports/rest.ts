// The REST face: one express route per registered operation under /api/v1, with scope check and zod-parsed input.
import { Router } from 'express';
import type { BoundHandler, ServiceDeps, AuthContext } from '../contract/handler.js';
import { expressPath } from '../contract/operation.js';
import { parseOperationInput } from './operation-input.js';
import { assertScope, idempotencyHeader, runParsedOperation } from './run-operation.js';

/**
 * Scope checks run before request validation, so a key without the scope learns nothing about the schema.
 * Each route only checks and passes on (next), the operation itself runs in restRoutes().
 */
export function scopeChecks(handlers: readonly BoundHandler[]): Router {
  const router = Router();
  for (const { operation } of handlers) {
    router[operation.method](expressPath(operation.path), (_req, res, next) => {
      assertScope(operation, res.locals.auth as AuthContext);
      next();
    });
  }
  return router;
}

export function restRoutes(handlers: readonly BoundHandler[], deps: ServiceDeps): Router {
  const router = Router();
  for (const bound of handlers) {
    const { operation } = bound;
    router[operation.method](expressPath(operation.path), async (req, res) => {
      const auth = res.locals.auth as AuthContext;
      const input = parseOperationInput(operation, {
        params: req.params,
        query: req.query,
        body: req.body,
        idempotencyKey: idempotencyHeader(req),
      });
      const { status, body } = await runParsedOperation(bound, input, { auth, deps, log: req.log });
      if (status === 204) res.status(204).end();
      else res.status(status).json(body);
    });
  }
  return router;
}
