// The REST face: one express route per registered operation under /api/v1, run through the operation pipeline.
import { Router, type Request, type Response } from 'express';
import type { Actor, RequestMeta } from '../contract/actor.js';
import { expressPath } from '../contract/operation.js';
import { requestOrigin } from '../platform/http-request.js';
import { idempotencyHeader, type OperationPipeline } from './execute-operation.js';
import { markOperation } from './request-observer.js';

/** What the audit log records of an express request; `req.id` is the X-Request-Id the response carries. */
export function requestMetaOf(req: Request): RequestMeta {
  const origin = requestOrigin(req);
  return { requestId: String(req.id), ip: origin.ip, userAgent: origin.userAgent };
}

/** The actor the authentication middleware resolved for this request. */
export function actorOf(res: Response): Actor {
  return res.locals.actor as Actor;
}

/**
 * Scope checks run before request validation, so a key without the scope learns nothing about the schema.
 * Each route only checks and passes on (next); the operation itself runs in restRoutes().
 */
export function scopeChecks(pipeline: OperationPipeline): Router {
  const router = Router();
  for (const { operation } of pipeline.handlers) {
    router[operation.method](expressPath(operation.path), (_req, res, next) => {
      markOperation(res, operation.name);
      pipeline.authorize(operation, actorOf(res));
      next();
    });
  }
  return router;
}

export function restRoutes(pipeline: OperationPipeline): Router {
  const router = Router();
  for (const bound of pipeline.handlers) {
    router[bound.operation.method](expressPath(bound.operation.path), async (req, res) => {
      const parts = { params: req.params, query: req.query, body: req.body, idempotencyKey: idempotencyHeader(req) };
      const { status, body } = await pipeline.execute(bound, actorOf(res), { kind: 'parts', parts }, requestMetaOf(req), req.log);
      if (status === 204) res.status(204).end();
      else res.status(status).json(body);
    });
  }
  return router;
}
