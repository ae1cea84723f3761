// What the import tests share: streaming a body to an import route, waiting for the job, campaigns and key fixtures.
import { expect } from 'vitest';
import type { TestService } from '../support/service.js';

export interface Posted {
  status: number;
  body: any;
  requestId: string | null;
  headers: Headers;
}

/** POSTs a body (text, or an async source of chunks streamed with chunked transfer encoding). */
export async function postBody(baseUrl: string, path: string, key: string, body: string | AsyncIterable<Uint8Array>, contentType: string): Promise<Posted> {
  const streamed = typeof body !== 'string';
  const res = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body: streamed ? (ReadableStreamFrom(body) as never) : body,
    ...(streamed ? { duplex: 'half' } : {}),
  } as RequestInit);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* keep the text */
  }
  return { status: res.status, body: parsed, requestId: res.headers.get('x-request-id'), headers: res.headers };
}

function ReadableStreamFrom(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
  });
}

/** Lines of a CSV (header first) as chunks of about 64 KiB. */
export async function* csvChunks(header: string, rows: Iterable<string>): AsyncGenerator<Uint8Array> {
  let chunk = header + '\n';
  for (const row of rows) {
    chunk += row + '\n';
    if (chunk.length >= 65_536) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  if (chunk) yield Buffer.from(chunk);
}

export function* range(count: number, line: (i: number) => string): Generator<string> {
  for (let i = 0; i < count; i++) yield line(i);
}

/** Polls GET /imports/{id} until the import has finished (bounded). */
export async function awaitImport(service: TestService, key: string, id: string, timeoutMs = 60_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await service.api(key).get(`/api/v1/imports/${id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.status === 'SUCCEEDED' || res.body.status === 'FAILED') return res.body;
    if (Date.now() > until) throw new Error(`import ${id} still ${res.body.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function discountCampaign(service: TestService, key: string, voucher: Record<string, unknown> = {}): Promise<string> {
  const campaign = await service.api(key).create('/api/v1/campaigns', {
    name: 'Imported codes',
    type: 'DISCOUNT_COUPONS',
    currency: 'EUR',
    voucher: { discount: { type: 'AMOUNT', amountOff: 500 }, redemptionLimit: 1, ...voucher },
  });
  return campaign.id as string;
}
