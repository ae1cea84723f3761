// Free-form JSON (metadata, and any field the schemas take as an unknown value) is at most 32 levels deep and 64 KiB:
// on every operation of the registry that takes it, on every face (REST through the hot path and through express,
// RPC, RPC batches, MCP), deeper is a 400 naming the field, never a 500; 32 levels are stored and read back.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_FREE_FORM_BYTES, MAX_FREE_FORM_DEPTH } from '../../src/contract/common.schemas.js';
import type { Operation } from '../../src/contract/operation.js';
import { operations } from '../../src/registry.js';
import { freeFormPaths } from '../../src/transports/operation-input.js';
import { arbitraryFromSchema } from '../support/arbitrary-from-schema.js';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
let viaExpress: TestService;
let key: string;
const made: Record<string, string> = {};

/** JSON text of an object nested `depth` levels ({"a":"x"} is one level), built as text: too deep to stringify. */
const nested = (depth: number) => '{"a":'.repeat(depth) + '"x"' + '}'.repeat(depth);

/** Where each operation takes free-form JSON, found from its zod body schema: a new operation is covered by itself. */
const targets = operations.flatMap((op) => (op.body ? freeFormPaths(op.body).map((path) => ({ op: op as Operation, path })) : []));
const opsWithFreeForm = [...new Set(targets.map((t) => t.op))];

// An order with one item: items carry free-form metadata too, and an item needs its quantity and price beside it.
const ITEMS = () => [{ quantity: 1, price: 1_000 }];
const ORDER = () => ({ amount: 1_000, currency: 'EUR', items: ITEMS() });

/** A valid input (path and body fields merged, as RPC takes it) per operation, on the fixtures made below. */
const BASE: Record<string, () => Record<string, unknown>> = {
  'campaigns.create': () => ({ name: 'ff', type: 'DISCOUNT_COUPONS', voucher: { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 } } }),
  'campaigns.update': () => ({ id: made.campaign, voucher: { type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 } } }),
  'vouchers.create': () => ({ code: `FF-${randomUUID().slice(0, 8)}`, type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 } }),
  'vouchers.update': () => ({ code: 'FF-CODE' }),
  'customers.create': () => ({}),
  'customers.update': () => ({ id: made.customer }),
  'vouchers.validate': () => ({ code: 'FF-CODE', order: ORDER(), customer: { id: made.customer } }),
  'redemptions.redeem': () => ({ code: 'FF-CODE', order: ORDER(), customer: { id: made.customer } }),
  'redemptions.stack': () => ({ vouchers: [{ code: 'FF-CODE' }], order: ORDER(), customer: { id: made.customer }, idempotencyKey: randomUUID() }),
  'redemptions.validateStack': () => ({ vouchers: [{ code: 'FF-CODE' }], order: ORDER(), customer: { id: made.customer } }),
  'promotions.createTier': () => ({ id: made.promotion, name: 'tier', discount: { type: 'PERCENT', percentOff: 1 } }),
  'promotions.updateTier': () => ({ id: made.tier }),
  'promotions.validate': () => ({ order: ORDER(), customer: { id: made.customer } }),
  'promotions.redeemTier': () => ({ id: made.tier, order: ORDER(), customer: { id: made.customer } }),
  'qualifications.check': () => ({ order: ORDER(), customer: { id: made.customer } }),
  'orders.create': () => ({ amount: 1_000, currency: 'EUR', items: ITEMS(), customer: { id: made.customer } }),
  'orders.update': () => ({ id: made.order, items: ITEMS() }),
  'publications.create': () => ({ campaignId: made.campaign, customer: { id: made.customer } }),
  'validationRules.evaluate': () => ({ id: made.rule, order: ORDER(), customer: { id: made.customer } }),
};

/** The required properties of a value drawn from a JSON Schema, all the way down. */
function requiredOnly(value: unknown, schema: any, root: any): unknown {
  const resolved = schema.$ref ? (root.$defs?.[String(schema.$ref).split('/').pop() ?? ''] ?? {}) : schema;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !resolved.properties) return value;
  const required = new Set<string>(resolved.required ?? []);
  return Object.fromEntries(Object.entries(value).filter(([k]) => required.has(k)).map(([k, v]) => [k, requiredOnly(v, resolved.properties[k], root)]));
}

/** An operation's input: from BASE, or else the required fields of one drawn from its JSON Schema (on no fixture). */
function inputOf(op: Operation): Record<string, unknown> {
  const known = BASE[op.name];
  if (known) return known();
  const schema = z.toJSONSchema(op.input, { io: 'input', unrepresentable: 'any' });
  return requiredOnly(fc.sample(arbitraryFromSchema(schema), { numRuns: 1, seed: 17 })[0], schema, schema) as Record<string, unknown>;
}

const SENTINEL = '__free_form__';

/** The input with a sentinel at each path (`*` becomes a one-element array), as JSON text with `value` in its place. */
function withValueAt(input: Record<string, unknown>, paths: readonly string[][], value: string): string {
  const copy = structuredClone(input);
  for (const path of paths) {
    let node: Record<string, unknown> = copy;
    path.forEach((step, i) => {
      const last = i === path.length - 1;
      const key = step === '*' ? '0' : step;
      if (last) node[key] = SENTINEL;
      else {
        const nextIsList = path[i + 1] === '*';
        node[key] ??= nextIsList ? [] : {};
        node = node[key] as Record<string, unknown>;
      }
    });
  }
  return JSON.stringify(copy).replaceAll(JSON.stringify(SENTINEL), value);
}

/** The REST call of an operation for a merged input: path fields into the URL, the rest as the body with `value` at `paths`. */
function restCall(op: Operation, input: Record<string, unknown>, paths: readonly string[][], value: string) {
  const url = '/api/v1' + op.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(String(input[name])));
  const body = Object.fromEntries(Object.entries(input).filter(([k]) => !(k in (op.params?.shape ?? {}))));
  return { method: op.method.toUpperCase(), url, text: withValueAt(body, paths, value) };
}

async function send(base: string, method: string, url: string, text?: string, headers: Record<string, string> = {}) {
  const res = await fetch(base + url, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: text });
  const raw = await res.text();
  return { status: res.status, body: raw ? JSON.parse(raw) : undefined };
}

function rpc(name: string, text: string) {
  return send(service.baseUrl, 'POST', `/api/rpc/${name}`, text);
}

async function mcp(name: string, text: string) {
  const message = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name.replace('.', '_')}","arguments":${text}}}`;
  const res = await send(service.baseUrl, 'POST', '/api/mcp', message, { accept: 'application/json, text/event-stream' });
  return { status: res.status, problem: res.body?.result?.structuredContent?.problem, isError: res.body?.result?.isError };
}

beforeAll(async () => {
  service = await startTestService();
  viaExpress = await startTestService({ database: service.db, hotPath: false });
  const { key: k, api } = await service.newWorkspace();
  key = k;
  made.campaign = (await api.create('/api/v1/campaigns', BASE['campaigns.create']!())).id;
  made.promotion = (await api.create('/api/v1/campaigns', { name: 'promo', type: 'PROMOTION' })).id;
  made.customer = (await api.create('/api/v1/customers', { sourceId: 'ff-customer' })).id;
  made.order = (await api.create('/api/v1/orders', { amount: 1_000, currency: 'EUR' })).id;
  made.tier = (await api.create(`/api/v1/campaigns/${made.promotion}/tiers`, { name: 'one', discount: { type: 'PERCENT', percentOff: 1 } })).id;
  made.rule = (await api.create('/api/v1/validation-rules', { name: 'any', conditions: { field: 'order.amount', op: 'gte', value: 0 } })).id;
  await api.create('/api/v1/vouchers', { code: 'FF-CODE', type: 'DISCOUNT', discount: { type: 'PERCENT', percentOff: 5 } });
});
afterAll(async () => {
  await viaExpress?.close();
  await service?.close();
});

describe('where free-form JSON is taken', () => {
  it('finds every metadata field of every operation body, as an independent walk of the JSON Schema does', () => {
    const fromJsonSchema = (schema: any, path: string[], out: string[]) => {
      for (const option of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) fromJsonSchema(option, path, out);
      for (const [name, child] of Object.entries<any>(schema.properties ?? {})) {
        if (name === 'metadata') out.push([...path, name].join('.'));
        else fromJsonSchema(child, [...path, name], out);
      }
      if (schema.items) fromJsonSchema(schema.items, [...path, '*'], out);
    };
    for (const op of operations) {
      if (!op.body) continue;
      const expected: string[] = [];
      fromJsonSchema(z.toJSONSchema(op.body, { io: 'input', unrepresentable: 'any' }), [], expected);
      const found = freeFormPaths(op.body).map((p) => p.join('.'));
      expect(found, op.name).toEqual(expect.arrayContaining(expected));
    }
    const named = targets.map((t) => `${t.op.name} ${t.path.join('.')}`);
    expect(named).toEqual(expect.arrayContaining(['customers.create metadata', 'redemptions.redeem metadata', 'redemptions.redeem order.metadata', 'redemptions.redeem customer.metadata', 'orders.create metadata', 'campaigns.create voucher.metadata', 'promotions.createTier metadata']));
  });
});

describe('metadata nested 10,000 levels deep', () => {
  it('is a 400 naming the field on every operation that takes it, through RPC and MCP', async () => {
    for (const { op, path } of targets) {
      const text = withValueAt(inputOf(op), [path], nested(10_000));
      const field = path.join('.').replaceAll('*', '0');
      const viaRpc = await rpc(op.name, text);
      expect(viaRpc.status, `${op.name} ${field}`).toBe(400);
      expect(viaRpc.body.errors, `${op.name} ${field}`).toEqual([{ path: field, message: `free-form JSON is at most ${MAX_FREE_FORM_DEPTH} levels deep` }]);
      const viaMcp = await mcp(op.name, text);
      expect(viaMcp.status).toBe(200);
      expect(viaMcp.isError, `${op.name} ${field}`).toBe(true);
      expect(viaMcp.problem).toMatchObject({ status: 400, errors: [{ path: field }] });
    }
  });

  it('is a 400 naming body.<field> on every REST route that takes it, through the hot path and through express', async () => {
    for (const { op, path } of targets) {
      const input = inputOf(op);
      const { method, url, text } = restCall(op, input, [path], nested(10_000));
      for (const server of [service, viaExpress]) {
        const res = await send(server.baseUrl, method, url, text);
        expect(res.status, `${op.name} ${path.join('.')} ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body.errors).toEqual([{ path: `body.${path.join('.').replaceAll('*', '0')}`, message: expect.stringContaining('levels deep') }]);
      }
    }
  });

  it('is a 400 for its own call in an RPC batch, the other calls running', async () => {
    const res = await send(service.baseUrl, 'POST', '/api/rpc', `{"calls":[{"operation":"customers.create","input":{"metadata":${nested(10_000)}}},{"operation":"customers.create","input":{"metadata":{"ok":true}}}]}`);
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ status: 400, problem: { errors: [{ path: 'metadata' }] } });
    expect(res.body.results[1]).toMatchObject({ status: 201, output: { metadata: { ok: true } } });
  });
});

describe('the limits themselves', () => {
  it(`accepts ${MAX_FREE_FORM_DEPTH} levels at every free-form field of every operation, and refuses ${MAX_FREE_FORM_DEPTH + 1}`, async () => {
    for (const op of opsWithFreeForm) {
      const paths = targets.filter((t) => t.op === op).map((t) => t.path);
      const input = inputOf(op);
      const deepest = restCall(op, input, paths, nested(MAX_FREE_FORM_DEPTH));
      const accepted = await send(service.baseUrl, deepest.method, deepest.url, deepest.text);
      const shown = `${op.name} ${JSON.stringify(accepted.body)?.slice(0, 300)}`;
      // On the fixtures the call succeeds; an operation without one (drawn input) must at least not refuse the depth.
      if (BASE[op.name]) expect(accepted.status, shown).toBeLessThan(300);
      else expect(accepted.status < 500 && !JSON.stringify(accepted.body ?? '').includes('levels deep'), shown).toBe(true);
      const tooDeep = restCall(op, input, paths.slice(0, 1), nested(MAX_FREE_FORM_DEPTH + 1));
      expect((await send(service.baseUrl, tooDeep.method, tooDeep.url, tooDeep.text)).status, op.name).toBe(400);
    }
  });

  it('stores 32 levels as sent and reads them back', async () => {
    const created = await send(service.baseUrl, 'POST', '/api/v1/customers', `{"metadata":${nested(MAX_FREE_FORM_DEPTH)}}`);
    expect(created.status).toBe(201);
    const read = await send(service.baseUrl, 'GET', `/api/v1/customers/${created.body.id}`);
    expect(JSON.stringify(read.body.metadata)).toBe(nested(MAX_FREE_FORM_DEPTH));
  });

  it(`refuses free-form JSON over ${MAX_FREE_FORM_BYTES / 1024} KiB, naming the field, and takes it up to that size`, async () => {
    const sized = (bytes: number) => ({ note: 'é'.repeat(Math.floor((bytes - 12) / 2)) });
    const fits = sized(MAX_FREE_FORM_BYTES);
    expect(Buffer.byteLength(JSON.stringify(fits))).toBeLessThanOrEqual(MAX_FREE_FORM_BYTES);
    expect((await send(service.baseUrl, 'POST', '/api/v1/customers', JSON.stringify({ metadata: fits }))).status).toBe(201);
    const over = await send(service.baseUrl, 'POST', '/api/v1/vouchers/FF-CODE/redemption', JSON.stringify({ order: { amount: 1, currency: 'EUR' }, metadata: sized(MAX_FREE_FORM_BYTES + 4) }));
    expect(over.status).toBe(400);
    expect(over.body.errors).toEqual([{ path: 'body.metadata', message: expect.stringContaining(`${MAX_FREE_FORM_BYTES} bytes`) }]);
  });
});
