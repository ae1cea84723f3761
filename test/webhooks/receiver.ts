// A real HTTP receiver on 127.0.0.1 for webhook tests: records every request (raw bytes, headers, time) and answers
// as the test says (status, delay, a hang, a dropped connection).
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  body: any;
  receivedAt: number;
}

export type Reply = { status?: number; body?: string; delayMs?: number; headers?: Record<string, string> } | 'hang' | 'drop';

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides each answer (default 200 "ok"); receives the request number, starting at 1. */
  reply: (request: ReceivedRequest, n: number) => Reply;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  let waiters: Array<() => void> = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    reply: () => ({ status: 200, body: 'ok' }),
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.requests.length < count) {
        if (Date.now() > deadline) throw new Error(`received ${receiver.requests.length} of ${count} requests in ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 50);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return receiver.requests;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        body = undefined;
      }
      const request: ReceivedRequest = { method: req.method!, path: req.url!, headers: req.headers, rawBody, body, receivedAt: Date.now() };
      receiver.requests.push(request);
      const current = waiters;
      waiters = [];
      for (const w of current) w();
      const reply = receiver.reply(request, receiver.requests.length);
      if (reply === 'hang') {
        hanging.add(res);
        return;
      }
      if (reply === 'drop') {
        req.socket.destroy();
        return;
      }
      const send = () => {
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? 'ok');
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  return receiver;
}
