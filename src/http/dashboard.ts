// The dashboard's side of the web service: the cookie face of the session operations (signing in and accepting an
// invitation set the session cookie, signing out and a password change clear it), run through the one pipeline;
// and the single-page app's static files at /dashboard, built by Vite into dist/dashboard (the shell needs no auth).
import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import typeis from 'type-is';
import type { Actor, RequestMeta } from '../contract/actor.js';
import { ProblemError } from '../contract/problems.js';
import type { StaffSettings } from '../contract/service-settings.js';
import { clearedSessionCookie, SESSION_TOKEN, sessionCookie, type WithSessionToken } from '../domains/staff/index.js';
import { hasRequestContent, JSON_TYPES, parseJsonBody, requestOrigin } from '../platform/http-request.js';
import { projectRoot } from '../platform/paths.js';
import type { OperationPipeline } from '../transports/execute-operation.js';
import { markOperation } from '../transports/request-observer.js';

export const DASHBOARD_PATH = '/dashboard';
const DASHBOARD_DIR = path.join(projectRoot, 'dist', 'dashboard');

/** Who calls an operation anyone may call (scope `none`) before signing in: holds no scope, so nothing else passes. */
const ANONYMOUS: Actor = Object.freeze({ type: 'system', id: 'anonymous', label: 'anonymous', scopes: [], workspaceId: '' });

/** The client's address: the socket's, or behind a trusted proxy the last X-Forwarded-For entry (the one it added). */
export function clientAddress(req: Request, trustProxy: boolean): string | undefined {
  const forwarded = req.headers['x-forwarded-for'];
  if (trustProxy && typeof forwarded === 'string') {
    const last = forwarded.split(',').at(-1)?.trim();
    if (last) return last.slice(0, 100);
  }
  return req.socket.remoteAddress;
}

function requestMeta(req: Request, settings: StaffSettings): RequestMeta {
  return { requestId: String(req.id), ip: clientAddress(req, settings.trustProxy), userAgent: requestOrigin(req).userAgent };
}

function jsonBody(maxBodyBytes: number): RequestHandler[] {
  return [
    (req, _res, next) => {
      if (hasRequestContent(req) && !typeis(req, JSON_TYPES)) next(new ProblemError('unsupported_media_type', 'send the body as application/json'));
      else next();
    },
    express.raw({ limit: maxBodyBytes, type: JSON_TYPES }),
    (req, _res, next) => {
      req.body = Buffer.isBuffer(req.body) ? parseJsonBody(req, req.body) : undefined;
      next();
    },
  ];
}

/** A browser signing in from another site is refused (login CSRF); a client that names no origin (curl) may. */
const signInFromOwnSiteOnly: RequestHandler = (req, _res, next) => {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') next(new ProblemError('forbidden', 'sign in from the dashboard itself'));
  else next();
};

export interface SessionCookieRouteOptions {
  pipeline: OperationPipeline;
  maxBodyBytes: number;
}

/** Mounted under /api/v1 before the REST face, so these routes answer here with the cookie. */
export function sessionCookieRoutes({ pipeline, maxBodyBytes }: SessionCookieRouteOptions): Router {
  const router = Router();
  const body = jsonBody(maxBodyBytes);

  const opening = (operationName: string) => async (req: Request, res: Response) => {
    markOperation(res, operationName);
    const bound = pipeline.find(operationName);
    const parts = { params: {}, query: {}, body: req.body };
    const settings = pipeline.deps.settings.staff;
    const { status, body: output } = await pipeline.execute(bound, ANONYMOUS, { kind: 'parts', parts }, requestMeta(req, settings), req.log);
    const opened = output as WithSessionToken;
    res.setHeader('Set-Cookie', sessionCookie(opened[SESSION_TOKEN], new Date(Date.now() + settings.sessionMaxAgeMs), settings));
    res.setHeader('Cache-Control', 'no-store');
    res.status(status).json(opened);
  };

  const ending = (operationName: string) => async (req: Request, res: Response) => {
    markOperation(res, operationName);
    const actor = await pipeline.authenticate(requestOrigin(req).credentials);
    const parts = { params: {}, query: {}, body: req.body };
    const settings = pipeline.deps.settings.staff;
    await pipeline.execute(pipeline.find(operationName), actor, { kind: 'parts', parts }, requestMeta(req, settings), req.log);
    // A key's caller has no cookie to clear; the handler refused it already.
    res.setHeader('Set-Cookie', clearedSessionCookie(settings));
    res.status(204).end();
  };

  router.post('/sessions', signInFromOwnSiteOnly, ...body, opening('sessions.create'));
  router.post('/staff-invitations/accept', signInFromOwnSiteOnly, ...body, opening('staffInvitations.accept'));
  router.delete('/sessions/current', ending('sessions.delete'));
  router.put('/sessions/current/password', ...body, ending('sessions.changePassword'));
  return router;
}

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/** The built single-page app: hashed assets cached for good, the shell never; any other path under it is the shell. */
export function dashboardRoutes(directory = DASHBOARD_DIR): Router {
  const router = Router();
  const index = path.join(directory, 'index.html');
  router.use((_req, res, next) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    next();
  });
  router.use(
    express.static(directory, {
      index: false,
      redirect: false,
      setHeaders: (res, file) => res.setHeader('Cache-Control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache'),
    }),
  );
  router.get(/.*/, (req, res) => {
    if (!req.originalUrl.startsWith(DASHBOARD_PATH + '/') && req.originalUrl.split('?')[0] === DASHBOARD_PATH) {
      // /dashboard → /dashboard/, so the shell's relative asset URLs resolve under it.
      res.redirect(301, DASHBOARD_PATH + '/');
      return;
    }
    if (!existsSync(index)) {
      res.status(503).type('text/plain').send('The dashboard is not built: run `npm run build`.\n');
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return router;
}
