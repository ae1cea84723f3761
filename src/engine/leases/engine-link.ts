// The link between members: a partition call for a slot another process holds goes to it over HTTP (keep-alive), in
// V8's structured-clone format, the same values a worker thread's message carries (dates, maps). Only members that
// read the shared secret from the database may call: the secret is checked before a body is read.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import v8 from 'node:v8';
import { ProblemError, type ProblemCode, type ProblemFieldError } from '../../contract/problems.js';
import type { Logger } from '../../platform/logger.js';
import type { PartitionCall } from '../messages.js';

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const SECRET_HEADER = 'x-engine-secret';

/** What crosses the link back: a result, an error as the caller should throw it, or "not mine (any more)". */
export type LinkReply =
  | { result: unknown }
  | { error: { problem?: ProblemCode; detail: string; errors?: ProblemFieldError[]; sqlState?: string } }
  | { notOwner: true };

export class NotOwner extends Error {
  constructor() {
    super('this member does not hold the slot');
  }
}

export interface LinkServer {
  url: string;
  close(): Promise<void>;
}

/** Serves calls for the slots this member holds; `serve` throws NotOwner for any other. */
export async function startLinkServer(options: {
  host: string;
  port: number;
  advertiseHost: string;
  secret: string;
  log: Logger;
  serve: (slot: number, call: PartitionCall) => Promise<unknown>;
}): Promise<LinkServer> {
  const expected = Buffer.from(options.secret);
  const server = http.createServer((req, res) => {
    const given = Buffer.from(String(req.headers[SECRET_HEADER] ?? ''));
    if (req.method !== 'POST' || req.url !== '/engine/call' || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      res.writeHead(req.method === 'POST' ? 403 : 404).end();
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      let calls: Array<{ slot: number; call: PartitionCall }>;
      try {
        calls = v8.deserialize(Buffer.concat(chunks)) as typeof calls;
        if (!Array.isArray(calls)) throw new Error('not a list of calls');
      } catch {
        res.writeHead(400).end();
        return;
      }
      // Every call of the batch at once (each partition batches them again); one reply with all the answers.
      void Promise.all(
        calls.map(({ slot, call }) =>
          options.serve(slot, call).then(
            (result): LinkReply => ({ result }),
            (error: unknown): LinkReply => {
              if (error instanceof NotOwner) return { notOwner: true };
              const sqlState = (error as { code?: unknown }).code;
              return {
                error: {
                  ...(error instanceof ProblemError ? { problem: error.code, ...(error.errors ? { errors: error.errors } : {}) } : {}),
                  detail: error instanceof Error ? error.message : String(error),
                  ...(typeof sqlState === 'string' && !(error instanceof ProblemError) ? { sqlState } : {}),
                },
              };
            },
          ),
        ),
      ).then((replies) => {
        const body = v8.serialize(replies);
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // exclusive: a cluster's web processes each need a port of their own here (not the primary's shared handle).
    server.listen({ port: options.port, host: options.host, exclusive: true }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  options.log.debug({ port }, 'engine link listening');
  return {
    url: `http://${options.advertiseHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        // Calls in flight finish (bounded); idle keep-alive connections go at once.
        const cut = setTimeout(() => server.closeAllConnections(), 2_000);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

interface Queued {
  slot: number;
  call: PartitionCall;
  resolve: (reply: LinkReply) => void;
  reject: (error: Error) => void;
}

/**
 * Calls other members; one keep-alive agent for all of them. Calls to one member made in the same turn of the event
 * loop travel together in one request (as a partition batches its queue), so a busy link costs one HTTP exchange per
 * turn rather than one per call; each call still gets its own answer.
 */
export class LinkClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private readonly queues = new Map<string, Queued[]>();

  constructor(private readonly secret: string) {}

  call(url: string, slot: number, call: PartitionCall, timeoutMs: number): Promise<LinkReply> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(url);
      if (!queue) {
        this.queues.set(url, (queue = []));
        setImmediate(() => {
          this.queues.delete(url);
          this.send(url, queue!, timeoutMs);
        });
      }
      queue.push({ slot, call, resolve, reject });
    });
  }

  private send(url: string, batch: Queued[], timeoutMs: number): void {
    const body = v8.serialize(batch.map(({ slot, call }) => ({ slot, call })));
    const fail = (error: Error) => batch.forEach((q) => q.reject(error));
    const req = http.request(
      `${url}/engine/call`,
      {
        method: 'POST',
        agent: this.agent,
        timeout: timeoutMs,
        headers: { 'content-type': 'application/octet-stream', 'content-length': body.length, [SECRET_HEADER]: this.secret },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200) return fail(new Error(`engine link: ${url} answered ${res.statusCode}`));
          let replies: LinkReply[];
          try {
            replies = v8.deserialize(Buffer.concat(chunks)) as LinkReply[];
          } catch (error) {
            return fail(error as Error);
          }
          batch.forEach((q, i) => (replies[i] ? q.resolve(replies[i]) : q.reject(new Error(`engine link: ${url} gave no answer to a call`))));
        });
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`engine link: ${url} did not answer in ${timeoutMs} ms`)));
    req.on('error', fail);
    req.end(body);
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The error a reply carries, as the caller throws it (a thread's reply is rebuilt the same way). */
export function errorOf(reply: Extract<LinkReply, { error: unknown }>): Error {
  const { problem, detail, errors, sqlState } = reply.error;
  if (problem) return new ProblemError(problem, detail, errors ? { errors } : undefined);
  const error = new Error(detail);
  if (sqlState) Object.assign(error, { code: sqlState });
  return error;
}
