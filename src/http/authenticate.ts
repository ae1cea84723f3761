// Express's admission step: the request's credentials → the actor (res.locals.actor) charged to its rate limit, whose
// RateLimit-Policy and RateLimit fields go on the response; or a 401/403/429 problem.
import type { Request, RequestHandler } from 'express';
import { MAX_BATCH_CALLS } from '../client/version.js';
import { requestOrigin } from '../platform/http-request.js';
import type { Admission, Caller } from '../transports/execute-operation.js';
import { RPC_PREFIX } from '../transports/rpc.js';

/** An RPC batch costs one request per call, so batching does not multiply a key's limit; anything else costs one. */
function requestCost(req: Request): number {
  if (req.method !== 'POST' || req.baseUrl !== RPC_PREFIX || req.path !== '/') return 1;
  const calls = (req.body as { calls?: unknown } | undefined)?.calls;
  return Array.isArray(calls) ? Math.min(Math.max(calls.length, 1), MAX_BATCH_CALLS) : 1;
}

export function authenticate(admit: (caller: Caller) => Promise<Admission>): RequestHandler {
  return async (req, res, next) => {
    let admission: Admission;
    try {
      const origin = requestOrigin(req);
      admission = await admit({ credentials: origin.credentials, address: origin.ip, cost: requestCost(req) });
    } catch (error) {
      next(error);
      return;
    }
    const { actor, headers } = admission;
    if (headers) for (const name in headers) res.setHeader(name, headers[name]!);
    res.locals.actor = actor;
    req.log = req.log.child({ workspaceId: actor.workspaceId });
    next();
  };
}
