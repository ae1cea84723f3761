// What every face reads of a raw HTTP request the same way: its id, whether it has a body, its text, where it came from.
import { isUtf8 } from 'node:buffer';
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

/** A body that is not UTF-8 JSON: `charset` names another encoding (415), the others are 400. */
export class MalformedBodyError extends Error {
  constructor(
    message: string,
    readonly kind: 'charset' | 'encoding' | 'syntax',
  ) {
    super(message);
  }
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/** The body's charset parameter in lower case, undefined when none is given (UTF-8 is the only one taken). */
export function charsetOf(req: IncomingMessage): string | undefined {
  return CHARSET.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
}

export function isUtf8Charset(charset: string | undefined): charset is 'utf-8' | 'utf8' | undefined {
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

const raise = (error: MalformedBodyError): never => {
  throw error;
};

/**
 * The text of a JSON body: the one decoding of every route (express and the hot path). UTF-8 only (a charset
 * parameter must say utf-8), invalid bytes refused, a leading byte-order mark dropped (RFC 8259 8.1 lets a parser
 * ignore it). A refusal goes to `fail` (default: thrown), and the text is then empty.
 */
export function decodeJsonText(req: IncomingMessage, bytes: Buffer, fail: (error: MalformedBodyError) => void = raise): string {
  const charset = charsetOf(req);
  if (!isUtf8Charset(charset)) {
    fail(new MalformedBodyError(`send the body as UTF-8 (charset=utf-8), not ${charset.slice(0, 40)}`, 'charset'));
    return '';
  }
  if (!isUtf8(bytes)) {
    fail(new MalformedBodyError('the body is not valid UTF-8', 'encoding'));
    return '';
  }
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return bytes.toString('utf8', bom ? 3 : 0);
}

/** A JSON body as express routes get it: an object or array (as the hot path takes), undefined when empty. */
export function parseJsonBody(req: IncomingMessage, bytes: Buffer): unknown {
  const text = decodeJsonText(req, bytes);
  if (text.length === 0) return undefined;
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') throw new MalformedBodyError('the body is not valid JSON', 'syntax');
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedBodyError('the body is not valid JSON', 'syntax');
  }
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
