// The client library against a running service: typed calls, list iteration, typed errors, safe retries,
// time-outs, the version handshake and the browser guard.
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  ApiError,
  CLIENT_VERSION,
  ConnectionError,
  createClient,
  PromotionsError,
  TimeoutError,
  VersionMismatchError,
  type OutputOf,
  type PromotionsClient,
} from '../../src/client/index.js';
import { implement, type BoundHandler } from '../../src/contract/handler.js';
import type { ExplanationCode } from '../../src/contract/checkout.schemas.js';
import { defineOperation } from '../../src/contract/operation.js';
import { ProblemError } from '../../src/contract/problems.js';
import { packageVersion } from '../../src/platform/paths.js';
import { freePort } from '../support/processes.js';
import { startServiceWithOperations, type ServiceWithOperations } from '../rpc/service-with-operations.js';

// Probe operations registered at test time: they count attempts so retries can be observed on a real server.
const attempts = new Map<string, string[]>();
const probeContract = {
  flakyIdempotent: defineOperation({
    name: 'probes.flakyIdempotent',
    // Probes keep their state in memory: nothing is committed, so nothing is audited.
    effect: 'read',
    method: 'post',
    path: '/probes/flaky-idempotent',
    scope: 'campaigns:write',
    summary: 'Fails twice with 503, then answers',
    tags: ['Probes'],
    idempotent: true,
    body: z.object({ run: z.string(), idempotencyKey: z.string().optional() }),
    output: z.object({ attempts: z.number(), keys: z.array(z.string()) }),
  }),
  flakyWrite: defineOperation({
    name: 'probes.flakyWrite',
    // Probes keep their state in memory: nothing is committed, so nothing is audited.
    effect: 'read',
    method: 'post',
    path: '/probes/flaky-write',
    scope: 'campaigns:write',
    summary: 'Always 503',
    tags: ['Probes'],
    body: z.object({ run: z.string() }),
    output: z.object({ ok: z.boolean() }),
  }),
  slowIdempotent: defineOperation({
    name: 'probes.slowIdempotent',
    // Probes keep their state in memory: nothing is committed, so nothing is audited.
    effect: 'read',
    method: 'post',
    path: '/probes/slow-idempotent',
    scope: 'campaigns:write',
    summary: 'The first attempt of a key takes 600 ms; others meanwhile get idempotency_conflict',
    tags: ['Probes'],
    idempotent: true,
    body: z.object({ run: z.string(), idempotencyKey: z.string().optional() }),
    output: z.object({ executions: z.number() }),
  }),
  slowRead: defineOperation({
    name: 'probes.slowRead',
    method: 'get',
    path: '/probes/slow',
    scope: 'campaigns:read',
    summary: 'Answers after a delay',
    tags: ['Probes'],
    query: z.object({ run: z.string(), ms: z.coerce.number().int() }),
    output: z.object({ attempts: z.number() }),
  }),
};
const running = new Map<string, 'running' | 'done'>();
const seen = (run: string, key = '') => {
  const list = attempts.get(run) ?? [];
  list.push(key);
  attempts.set(run, list);
  return list;
};
const probeHandlers: BoundHandler[] = implement(probeContract, {
  flakyIdempotent: async ({ input }) => {
    const list = seen(input.run, input.idempotencyKey ?? '(none)');
    if (list.length < 3) throw new ProblemError('service_unavailable', 'try again');
    return { attempts: list.length, keys: list };
  },
  flakyWrite: async ({ input }) => {
    seen(input.run);
    throw new ProblemError('service_unavailable', 'try again');
  },
  slowIdempotent: async ({ input }) => {
    const key = input.idempotencyKey!;
    const state = running.get(key);
    if (state === 'running') throw new ProblemError('idempotency_conflict', 'the first request with this key is still running');
    if (state === 'done') return { executions: attempts.get(input.run)!.length };
    running.set(key, 'running');
    seen(input.run);
    await new Promise((r) => setTimeout(r, 600));
    running.set(key, 'done');
    return { executions: 1 };
  },
  slowRead: async ({ input }) => {
    const list = seen(input.run);
    if (list.length === 1) await new Promise((r) => setTimeout(r, input.ms));
    return { attempts: list.length };
  },
});

let service: ServiceWithOperations;
let client: PromotionsClient;
beforeAll(async () => {
  service = await startServiceWithOperations({ extra: probeHandlers });
  client = createClient({ baseUrl: service.baseUrl, apiKey: await service.newKey(), maxRetryDelayMs: 50, extraOperations: Object.values(probeContract) });
});
afterAll(async () => service?.close());

describe('typed calls', () => {
  it('creates and reads through the namespaces and by name, typed from the zod schemas', async () => {
    const campaign = await client.campaigns.create({ name: 'Typed', type: 'DISCOUNT_COUPONS', currency: 'EUR' });
    expectTypeOf(campaign.id).toEqualTypeOf<string>();
    expectTypeOf(client.campaigns.create).parameter(0).toHaveProperty('type');
    const voucher = await client.call('vouchers.create', { code: 'TYPED-1', campaignId: campaign.id, discount: { type: 'PERCENT', percentOff: 10 } });
    expectTypeOf(voucher).toEqualTypeOf<OutputOf<'vouchers.create'>>();
    expect(voucher.code).toBe('TYPED-1');
    expect((await client.vouchers.get({ code: 'TYPED-1' })).campaignId).toBe(campaign.id);
    // a 204 operation resolves to undefined
    await expect(client.vouchers.delete({ code: 'TYPED-1' })).resolves.toBeUndefined();
    // @ts-expect-error an unknown field is a type error (and a 400 at run time)
    await expect(client.customers.list({ limitt: 3 })).rejects.toBeInstanceOf(ApiError);
  });

  it('validates and redeems; a repeated idempotency key replays the outcome', async () => {
    await client.vouchers.create({ code: 'REDEEM-1', type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 300 }, currency: 'EUR', redemptionLimit: 5 });
    const order = { amount: 5_000, currency: 'EUR' };
    const preview = await client.vouchers.validate({ code: 'REDEEM-1', order });
    expect(preview).toMatchObject({ valid: true, discount: { amount: 300 } });
    // outcome codes are the contract's enum, not any string
    const refused = await client.vouchers.validate({ code: 'NO-SUCH-CODE', order });
    expect(refused).toMatchObject({ valid: false, code: 'voucher_not_found' });
    // outcomes are unions on valid / ok: a refusal always has its code, from the contract's enum
    if (refused.valid) throw new Error('expected a refusal');
    expectTypeOf(refused.code).toEqualTypeOf<ExplanationCode>();
    const first = await client.redemptions.redeem({ code: 'REDEEM-1', order }, { idempotencyKey: 'order-7' });
    if (!first.ok) throw new Error(`refused: ${first.code}`);
    expectTypeOf(first.redemption.amount).toEqualTypeOf<number>();
    const again = await client.redemptions.redeem({ code: 'REDEEM-1', order }, { idempotencyKey: 'order-7' });
    expect(again).toMatchObject({ ok: true, idempotent: true, redemption: { id: first.redemption.id } });
    // without a key of its own each logical call gets a fresh one: two redemptions
    const other = await client.redemptions.redeem({ code: 'REDEEM-1', order });
    if (!other.ok) throw new Error(`refused: ${other.code}`);
    expect(other.redemption.id).not.toBe(first.redemption.id);
    expect((await client.vouchers.get({ code: 'REDEEM-1' })).redemption.redeemedCount).toBe(2);
  });

  it('iterates every item of a list, page after page', async () => {
    const campaign = await client.campaigns.create({ name: 'Paged', type: 'DISCOUNT_COUPONS', currency: 'EUR', voucher: { discount: { type: 'AMOUNT', amountOff: 100 } } });
    await client.vouchers.generate({ id: campaign.id, count: 23 });
    const codes: string[] = [];
    for await (const voucher of client.list('vouchers.list', { campaignId: campaign.id, limit: 5 })) {
      expectTypeOf(voucher.code).toEqualTypeOf<string>();
      codes.push(voucher.code);
    }
    expect(codes).toHaveLength(23);
    expect(new Set(codes).size).toBe(23);
    let pages = 0;
    for await (const page of client.pages('vouchers.list', { campaignId: campaign.id, limit: 10 })) pages += page.data.length ? 1 : 0;
    expect(pages).toBe(3);
  });

  it('reports its version, equal to the package version, and the server\'s', async () => {
    expect(CLIENT_VERSION).toBe(packageVersion);
    expect(client.version).toBe(packageVersion);
    expect(await client.serverVersion()).toBe(packageVersion);
    const described = await client.describe();
    expect(described.version).toBe(packageVersion);
    expect(described.operations.map((o) => o.name)).toContain('probes.slowRead');
  });
});

describe('errors', () => {
  it('throws ApiError carrying the problem+json fields', async () => {
    const error = await client.campaigns.get({ id: '0b6f4c1e-8d2a-4f57-9c55-7f0f2a1d9e31' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, code: 'not_found', title: 'Not found', operation: 'campaigns.get' });
    expect((error as ApiError).type).toMatch(/not-found$/);
    expect((error as ApiError).requestId).toBeTruthy();
    const invalid = (await client.vouchers.list({ limit: 0 }).catch((e: unknown) => e)) as ApiError;
    expect(invalid.code).toBe('invalid_request');
    expect(invalid.errors).toEqual([expect.objectContaining({ path: 'limit' })]);
    const forbidden = createClient({ baseUrl: service.baseUrl, apiKey: await service.newKey(['campaigns:read']) });
    await expect(forbidden.campaigns.create({ name: 'x', type: 'PROMOTION' })).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    const nobody = createClient({ baseUrl: service.baseUrl, apiKey: 'service_aaaaaaaaaaaa_' + 'b'.repeat(40) });
    await expect(nobody.campaigns.list()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('throws ConnectionError when nothing listens, after retrying a read', async () => {
    const port = await freePort();
    const offline = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', maxRetryDelayMs: 10 });
    await expect(offline.campaigns.list()).rejects.toBeInstanceOf(ConnectionError);
  });

  it('refuses a server of another major.minor with VersionMismatchError', async () => {
    const [major, minor] = packageVersion.split('.').map(Number);
    const newer = await startServiceWithOperations({ version: `${major}.${minor! + 1}.0` });
    try {
      const stale = createClient({ baseUrl: newer.baseUrl, apiKey: await newer.newKey() });
      const error = (await stale.campaigns.list().catch((e: unknown) => e)) as VersionMismatchError;
      expect(error).toBeInstanceOf(VersionMismatchError);
      expect(error.status).toBe(400);
      expect(error.code).toBe('version_mismatch');
      expect(error.detail).toContain(`${major}.${minor! + 1}.0`);
    } finally {
      await newer.close();
    }
  });
});

describe('retries and time-outs', () => {
  it('retries an idempotent operation with one idempotency key for the whole logical call', async () => {
    const result = await client.call('probes.flakyIdempotent', { run: 'a' });
    expect(result).toMatchObject({ attempts: 3 });
    const keys = attempts.get('a')!;
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    // a second logical call gets a key of its own
    await client.call('probes.flakyIdempotent', { run: 'b' });
    expect(attempts.get('b')![0]).not.toBe(keys[0]);
    // a caller's own key is used as given
    await client.call('probes.flakyIdempotent', { run: 'c' }, { idempotencyKey: 'order-42' });
    expect(attempts.get('c')).toEqual(['order-42', 'order-42', 'order-42']);
  });

  it('waits out a first attempt that is still running (idempotency_conflict on a retry) instead of failing', async () => {
    const result = await client.call('probes.slowIdempotent', { run: 'slow' }, { timeoutMs: 200, maxRetries: 20 });
    // executed once: the retries only waited for its outcome
    expect(result).toEqual({ executions: 1 });
    expect(attempts.get('slow')).toHaveLength(1);
  });

  it('never retries a write that is not idempotent', async () => {
    await expect(client.call('probes.flakyWrite', { run: 'w' })).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(attempts.get('w')).toHaveLength(1);
  });

  it('times out a slow attempt and retries a read', async () => {
    const result = await client.call('probes.slowRead', { run: 's', ms: 1_000 }, { timeoutMs: 200 });
    expect(result).toEqual({ attempts: 2 });
    const error = await client.call('probes.slowRead', { run: 't', ms: 1_000 }, { timeoutMs: 200, maxRetries: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
  });
});

describe('browser guard', () => {
  it('refuses an API key where window exists, unless told it is a server', () => {
    const global = globalThis as { window?: unknown };
    global.window = {};
    try {
      expect(() => createClient({ baseUrl: service.baseUrl, apiKey: 'k' })).toThrow(PromotionsError);
      expect(() => createClient({ baseUrl: service.baseUrl, apiKey: 'k' })).toThrow(/browser/);
      expect(() => createClient({ baseUrl: service.baseUrl, apiKey: 'k', dangerouslyAllowBrowser: true })).not.toThrow();
      expect(() => createClient({ baseUrl: service.baseUrl })).not.toThrow();
    } finally {
      delete global.window;
    }
  });
});
