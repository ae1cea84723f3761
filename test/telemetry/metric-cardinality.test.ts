// Label cardinality stays bounded: after a fuzz of malformed requests over every operation (odd JSON bodies, odd path
// values, unknown routes and RPC names, on REST, RPC and the hot path), every label value of the service's metrics is
// from a closed set (registry names, status classes, the ExplanationCode enum) and the series stay within the bound.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Operation } from '../../src/contract/operation.js';
import { operations } from '../../src/registry.js';
import { EXPLANATION_CODES } from '../../src/contract/outcomes.js';
import { arbitraryFromSchema } from '../support/arbitrary-from-schema.js';
import { parseMetrics, promtoolCheck, scrape, type MetricSample } from '../support/metrics-text.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let key: string;
beforeAll(async () => {
  service = await startTestService({ metrics: {} });
  ({ key } = await service.newWorkspace());
  await service.api(key).create('/api/v1/vouchers', { code: 'FUZZ-1', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 } });
});
afterAll(async () => service?.close());

const all = operations as readonly Operation[];
const OPERATIONS = new Set([...all.map((op) => op.name), 'rpc.batch', 'rpc.describe', 'mcp.message', 'none']);
const CODES = new Set<string>([...EXPLANATION_CODES, 'other']);
const CLASSES = new Set(['0xx', '1xx', '2xx', '3xx', '4xx', '5xx']);

/** Every label a service metric may carry, and the values it may take (a number for a partition or a bucket). */
const CLOSED: Record<string, (value: string) => boolean> = {
  operation: (v) => OPERATIONS.has(v),
  status_class: (v) => CLASSES.has(v),
  code: (v) => CODES.has(v),
  le: (v) => v === '+Inf' || Number.isFinite(Number(v)),
  partition: (v) => /^\d{1,3}$/.test(v),
  pool: (v) => ['web', 'partition', 'worker'].includes(v),
  state: (v) => ['busy', 'idle'].includes(v),
  status: (v) => ['delivered', 'retry_scheduled', 'dead', 'replay_failed'].includes(v),
  version: (v) => /^\d+\.\d+\.\d+/.test(v),
  node_version: (v) => v === process.versions.node,
};

const serviceSeries = (samples: MetricSample[]) => samples.filter((s) => s.name.startsWith('promotions_'));

/** Each operation a body from its own schema with hostile strings, or odd JSON; each path field an odd value. */
const oddSegment = fc.oneof(fc.string({ unit: 'binary', maxLength: 20 }), fc.constantFrom('..', '%00', 'a/b', 'x'.repeat(300), '😀', 'FUZZ-1'));
const odd = fc.oneof(fc.constantFrom('{', '[]', '"x"', '{"a":{"b":[1,{"c":null}]}}', '\u0000', ''), fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)));
const requestFor = (op: Operation) =>
  fc.record({
    body: op.body ? fc.oneof(arbitraryFromSchema(z.toJSONSchema(op.body, { io: 'input', unrepresentable: 'any' }) as never).map((v) => JSON.stringify(v)), odd) : odd,
    segment: oddSegment,
  });

function restPath(op: Operation, segment: string): string {
  let encoded: string;
  try {
    encoded = encodeURIComponent(segment);
  } catch {
    encoded = '%ED%A0%80';
  }
  return '/api/v1' + op.path.replace(/\{(\w+)\}/g, () => encoded);
}

async function send(method: string, path: string, body?: string) {
  const res = await fetch(service.baseUrl + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: method === 'GET' ? undefined : body });
  await res.arrayBuffer();
  return res.status;
}

describe('label cardinality', () => {
  it('stays within closed label sets after a fuzz of malformed requests over every operation', async () => {
    const before = serviceSeries(parseMetrics(await scrape(service.baseUrl)));
    const byName = new Map(all.map((op) => [op.name, op]));
    const fuzz = fc.constantFrom(...byName.keys()).chain((name) => fc.tuple(fc.constant(byName.get(name)!), requestFor(byName.get(name)!), oddSegment));
    await fc.assert(
      fc.asyncProperty(fuzz, async ([op, { body, segment }, stranger]) => {
        const statuses = [
          await send(op.method.toUpperCase(), restPath(op, segment), body),
          await send('POST', `/api/rpc/${op.name}`, body),
          await send('POST', `/api/rpc/${encodeURIComponent(stranger)}`, body),
          await send('GET', `/api/v1/${encodeURIComponent(stranger)}/x`),
        ];
        expect(statuses.every((s) => s < 500), `${op.name}: ${statuses.join(',')}`).toBe(true);
      }),
      { numRuns: 200 },
    );
    const text = await scrape(service.baseUrl);
    const after = serviceSeries(parseMetrics(text));

    const foreign = after.flatMap((s) => Object.entries(s.labels).filter(([label, value]) => !CLOSED[label]?.(value)).map(([label, value]) => `${s.name} ${label}=${JSON.stringify(value)}`));
    expect(foreign).toEqual([]);
    // Per metric family, the series cannot outgrow the product of its closed label sets.
    const requestPairs = new Set(after.filter((s) => s.name === 'promotions_http_request_duration_seconds_count').map((s) => `${s.labels.operation} ${s.labels.status_class}`));
    expect(requestPairs.size).toBeLessThanOrEqual(OPERATIONS.size * CLASSES.size);
    const refusalPairs = after.filter((s) => s.name === 'promotions_refusals_total');
    expect(refusalPairs.length).toBeLessThanOrEqual(OPERATIONS.size * CODES.size);
    const bound = (OPERATIONS.size * CLASSES.size * 16) + (OPERATIONS.size * CODES.size) + 200;
    console.info(`series before ${before.length}, after ${after.length} (bound ${bound}); request series: ${requestPairs.size} operation × status pairs`);
    expect(after.length).toBeLessThanOrEqual(bound);
    expect(after.length).toBeGreaterThan(before.length);
    expect(await promtoolCheck(text)).toEqual({ code: 0, output: '' });

    // 300 more requests to routes and operation names nobody declared add at most the `none` series of a status class.
    await fc.assert(
      fc.asyncProperty(oddSegment, oddSegment, async (a, b) => {
        await send('POST', `/api/rpc/${encodeURIComponent(a)}`, '{}');
        await send('GET', `/${encodeURIComponent(a)}/${encodeURIComponent(b)}`);
        await send('DELETE', `/api/v1/${encodeURIComponent(b)}`);
      }),
      { numRuns: 100 },
    );
    const again = serviceSeries(parseMetrics(await scrape(service.baseUrl)));
    const grown = again.filter((s) => !after.some((t) => t.name === s.name && JSON.stringify(t.labels) === JSON.stringify(s.labels)));
    expect(grown.filter((s) => s.labels.operation !== 'none' && s.name.startsWith('promotions_http_'))).toEqual([]);
    expect(grown.length).toBeLessThanOrEqual(CLASSES.size * 16);
  }, 180_000);
});
