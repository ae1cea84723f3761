// Bearer API key authentication: a missing, malformed, unknown or revoked key is 401.
import type { RequestHandler } from 'express';
import type { AuthContext } from '../contract/handler.js';
import { ProblemError } from '../contract/problems.js';
import type { Pool } from '../platform/database.js';
import type { Logger } from '../platform/logger.js';

export type VerifyApiKey = (db: Pool, token: string, onTouchError: (e: unknown) => void) => Promise<AuthContext | undefined>;

const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'Bearer realm="api"' };

/** The caller of an Authorization header, or a 401 ProblemError. Shared by express and the hot-path dispatcher. */
export async function authenticateHeader(db: Pool, verify: VerifyApiKey, header: string | undefined, log: Logger): Promise<AuthContext> {
  const token = header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
  if (!token) throw new ProblemError('unauthorized', 'send Authorization: Bearer <API key>', { headers: UNAUTHORIZED_HEADERS });
  const auth = await verify(db, token, (e) => log.warn({ err: e }, 'could not record API key use'));
  if (!auth) throw new ProblemError('unauthorized', 'the API key is invalid or revoked', { headers: UNAUTHORIZED_HEADERS });
  return auth;
}

export function authenticate(db: Pool, verify: VerifyApiKey): RequestHandler {
  return async (req, res, next) => {
    let auth: AuthContext;
    try {
      auth = await authenticateHeader(db, verify, req.headers.authorization, req.log);
    } catch (error) {
      next(error);
      return;
    }
    res.locals.auth = auth;
    req.log = req.log.child({ workspaceId: auth.workspaceId });
    next();
  };
}
