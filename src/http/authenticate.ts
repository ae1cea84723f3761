// Bearer API key authentication: a missing, malformed, unknown or revoked key is 401.
import type { RequestHandler } from 'express';
import type { AuthContext } from '../contract/handler.js';
import { ProblemError } from '../contract/problems.js';
import type { Pool } from '../platform/database.js';

export type VerifyApiKey = (db: Pool, token: string, onTouchError: (e: unknown) => void) => Promise<AuthContext | undefined>;

const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="api"' };

export function authenticate(db: Pool, verify: VerifyApiKey): RequestHandler {
  return async (req, res, next) => {
    const header = req.headers.authorization;
    const token = header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
    if (!token) {
      next(new ProblemError('unauthorized', 'send Authorization: Bearer <API key>', { headers: UNAUTHORIZED_HEADERS }));
      return;
    }
    const auth = await verify(db, token, (e) => req.log.warn({ err: e }, 'could not record API key use'));
    if (!auth) {
      next(new ProblemError('unauthorized', 'the API key is invalid or revoked', { headers: UNAUTHORIZED_HEADERS }));
      return;
    }
    res.locals.auth = auth;
    req.log = req.log.child({ workspaceId: auth.workspaceId });
    next();
  };
}
