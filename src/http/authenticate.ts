// Express's authentication step: the request's credentials → the actor (res.locals.actor), or a 401/403 problem.
import type { RequestHandler } from 'express';
import type { Actor, Credentials } from '../contract/actor.js';
import { requestOrigin } from '../platform/http-request.js';

export function authenticate(resolveActor: (credentials: Credentials) => Promise<Actor>): RequestHandler {
  return async (req, res, next) => {
    let actor: Actor;
    try {
      actor = await resolveActor(requestOrigin(req).credentials);
    } catch (error) {
      next(error);
      return;
    }
    res.locals.actor = actor;
    req.log = req.log.child({ workspaceId: actor.workspaceId });
    next();
  };
}
