// What every face reads of a raw HTTP request the same way: its id, whether it has a body, where it came from.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const REQUEST_ID_HEADER = 'x-request-id';
const SANE_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/** The request's id: the caller's X-Request-Id when it is sane, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
}

/** The media types a JSON body may be sent as. */
export const JSON_TYPES = ['application/json', 'application/*+json'];

export function hasRequestContent(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/** The parts of a request that authenticators and the audit log read. */
export function requestOrigin(req: IncomingMessage) {
  return {
    credentials: {
      method: req.method ?? 'GET',
      authorization: header(req, 'authorization'),
      cookie: header(req, 'cookie'),
      origin: header(req, 'origin'),
      secFetchSite: header(req, 'sec-fetch-site'),
    },
    ip: req.socket.remoteAddress,
    userAgent: header(req, 'user-agent')?.slice(0, 500),
  };
}
