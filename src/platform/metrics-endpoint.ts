// GET /metrics: this process's Prometheus text, or a node:cluster's sum gathered by its primary (AggregatorRegistry),
// behind a Bearer token when one is configured (compared as a hash, never kept or logged).
import cluster from 'node:cluster';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Logger } from './logger.js';
import { METRICS_CONTENT_TYPE } from './metrics-registry.js';

/** Where the text of a scrape comes from. */
export type MetricsExposition = () => Promise<string>;

const SCRAPE_REQUEST = 'promotions:metrics-request';
const SCRAPE_REPLY = 'promotions:metrics-reply';
const CLUSTER_TIMEOUT_MS = 10_000;

export function localExposition(registry: Registry): MetricsExposition {
  return () => registry.metrics();
}

/**
 * A web process of a cluster: its registry answers the primary's gathering, and a scrape it receives is the primary's
 * sum over every web process, so any one of them answers for all.
 */
export function clusterExposition(registry: Registry): MetricsExposition {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one installs prom-client's listener that answers the primary's requests.
  void new AggregatorRegistry();
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  let next = 1;
  process.on('message', (message: { type?: string; id?: number; text?: string; error?: string }) => {
    if (message?.type !== SCRAPE_REPLY || message.id === undefined) return;
    const entry = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error !== undefined) entry?.reject(new Error(message.error));
    else entry?.resolve(message.text ?? '');
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the cluster primary did not gather the metrics in time'));
      }, CLUSTER_TIMEOUT_MS);
      timer.unref();
      const settle = <T>(done: (value: T) => void) => (value: T) => {
        clearTimeout(timer);
        done(value);
      };
      waiting.set(id, { resolve: settle(resolve), reject: settle(reject) });
      process.send!({ type: SCRAPE_REQUEST, id });
    });
}

/** The cluster primary's side: gathers every web process's metrics for the one that was scraped. */
export function answerClusterScrapes(log: Logger): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== SCRAPE_REQUEST) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: SCRAPE_REPLY, id: message.id, text }),
      (error: Error) => {
        log.warn({ err: error.message }, 'gathering the web processes\' metrics failed');
        worker.send({ type: SCRAPE_REPLY, id: message.id, error: error.message });
      },
    );
  });
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The request handler of /metrics (express or a bare node:http server alike). */
export function metricsHandler(options: { exposition: MetricsExposition; token: string | undefined; log: Logger }) {
  const expected = options.token === undefined ? undefined : digest(`Bearer ${options.token}`);
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('use GET\n');
      return;
    }
    if (expected && !timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
      res.writeHead(401, { 'WWW-Authenticate': 'Bearer realm="metrics"', 'Content-Type': 'text/plain; charset=utf-8' }).end('send Authorization: Bearer <METRICS_TOKEN>\n');
      return;
    }
    options.exposition().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: Error) => {
        options.log.error({ err: error.message }, 'metrics exposition failed');
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end('the metrics could not be gathered; retry\n');
      },
    );
  };
}

/** Whether a request is for /metrics (a query string allowed). */
export function isMetricsRequest(url: string | undefined): boolean {
  return url === '/metrics' || url?.startsWith('/metrics?') === true;
}
