// Property: whatever JSON a client sends to any operation, deep or odd, on RPC or on its REST route (hot path
// included), the service answers it below 500: nesting thousands of levels deep, NUL and lone surrogates, a BOM,
// numbers past 2^53, arrays for objects, invalid UTF-8.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/contract/operation.js';
import { operations } from '../../src/registry.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startTestService();
  ({ key } = await service.newWorkspace());
  await service.api(key).create('/api/v1/vouchers', { code: 'PROP-1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 } });
});
afterAll(async () => service?.close());

const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('', '\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\ufeff', '😀', '%00', '../..', 'PROP-1', 'EUR', '2026-11-24T10:00:00Z', 'x'.repeat(5_000)),
);
const oddNumber = fc.constantFrom(0, -0, -1, 0.5, 1e308, -1e308, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER, 2 ** 64, 1e-7);
const scalarText = fc.oneof(oddString.map((s) => JSON.stringify(s)), oddNumber.map(String), fc.constantFrom('true', 'false', 'null'));

/** JSON text nested `depth` levels of objects or arrays around a scalar; built as text, being too deep to stringify. */
const deepText = fc
  .record({ depth: fc.integer({ min: 20, max: 12_000 }), kind: fc.constantFrom('object', 'array'), leaf: scalarText })
  .map(({ depth, kind, leaf }) => (kind === 'object' ? '{"k":'.repeat(depth) + leaf + '}'.repeat(depth) : '['.repeat(depth) + leaf + ']'.repeat(depth)));

const shallowText = fc
  .letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, scalarText, fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`), fc.dictionary(oddString, tie('value'), { maxKeys: 3 }).map(objectText)),
  }))
  .value as fc.Arbitrary<string>;

function objectText(entries: Record<string, unknown>): string {
  return `{${Object.entries(entries).map(([k, v]) => `${JSON.stringify(k)}:${String(v)}`).join(',')}}`;
}

/** The names an operation's input knows, so values land in real fields (and nested ones, e.g. order.metadata). */
function fieldNames(op: Operation): string[] {
  return Object.keys(op.input.shape);
}

/** A body for an operation: some of its fields (and a few strangers) holding odd or deep JSON. */
const bodyFor = (op: Operation) =>
  fc
    .dictionary(fc.oneof(fc.constantFrom(...fieldNames(op), 'metadata', 'order', 'customer'), oddString), fc.oneof(shallowText, deepText, fc.constant(`{"metadata":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`)), { maxKeys: 4 })
    .map(objectText);

const encodings = fc.constantFrom('plain', 'bom', 'invalid-utf8', 'not-json');

function encode(text: string, encoding: string): Buffer {
  if (encoding === 'bom') return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
  if (encoding === 'invalid-utf8') return Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0xc3, 0x28]), Buffer.from(text.slice(-1))]);
  if (encoding === 'not-json') return Buffer.from(text.slice(0, Math.max(1, text.length >> 1)));
  return Buffer.from(text);
}

/** A path segment; a lone surrogate cannot be URL-encoded, so it goes as the bytes of an encoded surrogate. */
function segment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

function restUrl(op: Operation, pathValue: string): string {
  return '/api/v1' + op.path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'code' ? 'PROP-1' : segment(pathValue)));
}

async function send(method: string, url: string, body: Buffer | undefined) {
  const res = await fetch(service.baseUrl + url, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
  const text = await res.text();
  return { status: res.status, text: text.slice(0, 300) };
}

describe('never a 5xx', () => {
  it('answers a path or query field holding an array 10,000 deep with a 400 on RPC', async () => {
    const deep = '['.repeat(10_000) + '1' + ']'.repeat(10_000);
    for (const [name, field] of [['customers.get', 'id'], ['vouchers.list', 'campaignId']]) {
      const res = await send('POST', `/api/rpc/${name}`, Buffer.from(`{"${field}":${deep}}`));
      expect(res.status, `${name} ${res.text}`).toBe(400);
    }
  });

  it('answers random deep or odd JSON on every operation, through RPC and REST, below 500', async () => {
    const byName = new Map((operations as readonly Operation[]).map((op) => [op.name, op]));
    const byOperation = fc.constantFrom(...byName.keys()).chain((name) => fc.tuple(fc.constant(name), bodyFor(byName.get(name)!), encodings, oddString));
    await fc.assert(
      fc.asyncProperty(byOperation, async ([name, text, encoding, pathValue]) => {
        const op = byName.get(name)!;
        const body = encode(text, encoding);
        const viaRpc = await send('POST', `/api/rpc/${op.name}`, body);
        expect(viaRpc.status, `rpc ${op.name} ${encoding} ${viaRpc.text}`).toBeLessThan(500);
        const method = op.method.toUpperCase();
        const viaRest = await send(method, restUrl(op, pathValue), method === 'GET' ? undefined : body);
        expect(viaRest.status, `${method} ${op.path} ${encoding} ${viaRest.text}`).toBeLessThan(500);
      }),
      { numRuns: 300 },
    );
    // A bound against a hang, not a measure: 300 runs took 120 s on a starved machine (two busy loops beside the suite).
  }, 300_000);
});
