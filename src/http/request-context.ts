// Request id (accepted from X-Request-Id when sane, else generated, always echoed) and the per-request child logger.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import { requestIdOf } from '../platform/http-request.js';
import type { Logger } from '../platform/logger.js';

export function requestContext(log: Logger) {
  return pinoHttp({
    logger: log,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const id = requestIdOf(req);
      res.setHeader('X-Request-Id', id);
      return id;
    },
    // Only what an operator needs: never headers (Authorization, cookies) and never bodies.
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    // One error line per real fault (500); an outage answered 503 is a warning, a client's mistake is info.
    customLogLevel: (_req, res, error) => (error || res.statusCode === 500 ? 'error' : res.statusCode >= 500 ? 'warn' : 'info'),
    quietReqLogger: true,
  });
}
