// One delivery attempt over HTTP: POST the exact bytes that were signed, no redirects followed, a time-out covering
// the whole exchange, the response body kept up to 4 KB, and the socket's addresses checked by guardedLookup.
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, refuseLiteralTarget } from '../webhook-target.js';

export const RESPONSE_BODY_LIMIT = 4096;
// Beyond this the rest of a response is not drained (the socket is dropped instead of reused).
const DRAIN_LIMIT = 64 * 1024;

export interface AttemptResult {
  succeeded: boolean;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  startedAt: Date;
}

export interface DeliveryRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface DeliveryClient {
  post(request: DeliveryRequest): Promise<AttemptResult>;
  close(): void;
}

/** PostgreSQL text cannot hold NUL characters; receivers can send anything. */
function storable(text: string): string {
  return text.replace(/\u0000/g, '\uFFFD');
}

function describeError(error: Error & { code?: string }): string {
  const text = error.code && !error.message.includes(error.code) ? `${error.message} (${error.code})` : error.message;
  return storable(text).slice(0, 500);
}

export function createDeliveryClient(options: { timeoutMs: number; allowPrivateTargets: boolean; userAgent: string; maxSocketsPerHost: number }): DeliveryClient {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSocketsPerHost, lookup: guardedLookup(options.allowPrivateTargets) };
  const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };

  function post(request: DeliveryRequest): Promise<AttemptResult> {
    const startedAt = new Date();
    const started = performance.now();
    const finish = (fields: Omit<AttemptResult, 'durationMs' | 'startedAt'>): AttemptResult => ({
      ...fields,
      durationMs: Math.max(0, Math.round(performance.now() - started)),
      startedAt,
    });
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return Promise.resolve(finish({ succeeded: false, responseStatus: null, responseBody: null, error: 'the endpoint URL is invalid' }));
    }
    const refused = refuseLiteralTarget(url, options.allowPrivateTargets);
    if (refused) return Promise.resolve(finish({ succeeded: false, responseStatus: null, responseBody: null, error: `refused: ${refused}` }));

    return new Promise((resolve) => {
      const isHttps = url.protocol === 'https:';
      const body = Buffer.from(request.body, 'utf8');
      let settled = false;
      const settle = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const req = (isHttps ? https : http).request(url, {
        method: 'POST',
        agent: isHttps ? agents.https : agents.http,
        headers: { ...request.headers, 'content-length': String(body.length) },
      });
      const timeoutMessage = `timed out after ${options.timeoutMs} ms`;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error(timeoutMessage));
      }, options.timeoutMs);
      req.on('error', (error) => {
        settle(finish({ succeeded: false, responseStatus: null, responseBody: null, error: timedOut ? timeoutMessage : describeError(error) }));
      });
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const kept: Buffer[] = [];
        let keptBytes = 0;
        let seen = 0;
        const done = () => {
          const text = storable(Buffer.concat(kept).toString('utf8'));
          const succeeded = status >= 200 && status < 300;
          const error = succeeded ? null : status >= 300 && status < 400 ? `redirect (HTTP ${status}) not followed` : `HTTP ${status}`;
          settle(finish({ succeeded, responseStatus: status, responseBody: text, error }));
        };
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (keptBytes < RESPONSE_BODY_LIMIT) {
            const part = chunk.subarray(0, RESPONSE_BODY_LIMIT - keptBytes);
            kept.push(part);
            keptBytes += part.length;
          }
          if (seen > DRAIN_LIMIT) {
            res.destroy();
            done();
          }
        });
        res.on('end', done);
        const broken = (error?: Error) => {
          const message = timedOut ? timeoutMessage : error ? describeError(error) : 'the connection closed before the response ended';
          settle(finish({ succeeded: false, responseStatus: status, responseBody: null, error: message }));
        };
        res.on('error', broken);
        res.on('close', () => broken());
      });
      req.end(body);
    });
  }

  return {
    post,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
