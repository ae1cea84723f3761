// Validation sessions: a valid validation with a session reserves the use (and the gift credits) for its key until it
// redeems with the key, is released or expires; other checkouts cannot take what is reserved, under races, across
// service restarts and across two services on one database.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryingUnavailable, type ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

const order = { amount: 10_000, currency: 'EUR' };
const code = (prefix = 'S') => `${prefix}-${randomUUID().slice(0, 12)}`;

function checkout(api: ApiClient) {
  return {
    async voucher(body: Record<string, unknown>) {
      const res = await api.post('/api/v1/vouchers', { code: code(), type: 'DISCOUNT', discount: { type: 'AMOUNT', amountOff: 100 }, currency: 'EUR', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body as { code: string; id: string };
    },
    giftCard: async (amount: number) => {
      const res = await api.post('/api/v1/vouchers', { code: code('G'), type: 'GIFT_CARD', gift: { amount, currency: 'EUR' } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body as { code: string; id: string };
    },
    validate: (c: string, body: Record<string, unknown> = { order }) => api.post(`/api/v1/vouchers/${c}/validate`, body),
    redeem: (c: string, body: Record<string, unknown> = { order }) => api.post(`/api/v1/vouchers/${c}/redemption`, body),
    release: (c: string, key: string) => api.delete(`/api/v1/vouchers/${c}/sessions/${key}`),
  };
}

async function sessionRows(service: TestService, voucherId: string) {
  const { rows } = await service.pool.query<{ key: string; amount: number }>('SELECT key, amount FROM voucher_sessions WHERE voucher_id = $1 ORDER BY key', [voucherId]);
  return rows;
}

describe('validation sessions', () => {
  let service: TestService;
  let api: ApiClient;
  let c: ReturnType<typeof checkout>;
  beforeAll(async () => {
    service = await startTestService();
    ({ api } = await service.newWorkspace());
    c = checkout(api);
  });
  afterAll(async () => service?.close());

  it('reserves the last use for the session that validated, which then redeems it', async () => {
    const v = await c.voucher({ redemptionLimit: 1 });
    const before = Date.now();
    const validated = await c.validate(v.code, { order, session: { key: 'cart-1' } });
    expect(validated.body).toMatchObject({ valid: true, session: { key: 'cart-1' } });
    const expiresAt = Date.parse(validated.body.session.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 599_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 601_000);

    const other = await c.validate(v.code);
    expect(other.body).toMatchObject({ valid: false, code: 'redemption_limit_reached', explanations: [{ code: 'redemption_limit_reached', reserved: 1 }] });
    expect((await c.redeem(v.code)).body).toMatchObject({ ok: false, code: 'redemption_limit_reached' });

    const redeemed = await c.redeem(v.code, { order, session: { key: 'cart-1' } });
    expect(redeemed.body).toMatchObject({ ok: true, redemption: { voucherCode: v.code } });
    expect(await sessionRows(service, v.id)).toEqual([]);
    // The reservation is consumed: the key now redeems as if none were given.
    expect((await c.redeem(v.code, { order, session: { key: 'cart-1' } })).body.code).toBe('redemption_limit_reached');
  });

  it('generates a key when none is given and writes nothing for a validation without a session', async () => {
    const v = await c.voucher({ redemptionLimit: 3 });
    expect((await c.validate(v.code)).body.valid).toBe(true);
    expect(await sessionRows(service, v.id)).toEqual([]);
    const res = await c.validate(v.code, { order, session: { ttlSeconds: 30 } });
    expect(res.body.valid).toBe(true);
    expect(res.body.session.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(res.body.session.expiresAt) - Date.now()).toBeLessThanOrEqual(30_000);
    expect(await sessionRows(service, v.id)).toEqual([{ key: res.body.session.key, amount: 0 }]);
  });

  it('lets no second session take the last use', async () => {
    const v = await c.voucher({ redemptionLimit: 2 });
    expect((await c.redeem(v.code)).body.ok).toBe(true);
    expect((await c.validate(v.code, { order, session: { key: 'a' } })).body.valid).toBe(true);
    const second = await c.validate(v.code, { order, session: { key: 'b' } });
    expect(second.body).toMatchObject({ valid: false, code: 'redemption_limit_reached', explanations: [{ limit: 2, reserved: 1 }] });
    expect(second.body.session).toBeUndefined();
    expect((await sessionRows(service, v.id)).map((r) => r.key)).toEqual(['a']);
  });

  it('refreshes a session validated again instead of reserving twice', async () => {
    const v = await c.voucher({ redemptionLimit: 2 });
    const first = await c.validate(v.code, { order, session: { key: 'again', ttlSeconds: 60 } });
    const second = await c.validate(v.code, { order, session: { key: 'again', ttlSeconds: 120 } });
    expect(second.body.valid).toBe(true);
    expect(Date.parse(second.body.session.expiresAt)).toBeGreaterThan(Date.parse(first.body.session.expiresAt));
    expect((await c.validate(v.code, { order, session: { key: 'other' } })).body.valid).toBe(true);
    expect((await c.validate(v.code, { order, session: { key: 'third' } })).body.code).toBe('redemption_limit_reached');
    expect((await sessionRows(service, v.id)).map((r) => r.key)).toEqual(['again', 'other']);
  });

  it('releases a reservation when it expires', async () => {
    const v = await c.voucher({ redemptionLimit: 1 });
    expect((await c.validate(v.code, { order, session: { key: 'short', ttlSeconds: 1 } })).body.valid).toBe(true);
    expect((await c.validate(v.code, { order, session: { key: 'late' } })).body.code).toBe('redemption_limit_reached');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await c.validate(v.code)).body.valid).toBe(true);
    expect((await c.validate(v.code, { order, session: { key: 'late' } })).body.valid).toBe(true);
    // The expired key redeems as if none were given: the use is now reserved by another session.
    expect((await c.redeem(v.code, { order, session: { key: 'short' } })).body.code).toBe('redemption_limit_reached');
    expect((await sessionRows(service, v.id)).map((r) => r.key)).toEqual(['late']);
  });

  it('releases a reservation at once on DELETE, with one audit entry; an unknown key or voucher is 404', async () => {
    const v = await c.voucher({ redemptionLimit: 1 });
    expect((await c.validate(v.code, { order, session: { key: 'leaving' } })).body.valid).toBe(true);
    const released = await c.release(v.code, 'leaving');
    expect(released.status).toBe(204);
    expect(await sessionRows(service, v.id)).toEqual([]);
    const { rows: entries } = await service.pool.query('SELECT operation, resource_type, resource_id, changes FROM audit_entries WHERE request_id = $1', [
      released.headers.get('x-request-id'),
    ]);
    expect(entries).toEqual([
      { operation: 'redemptions.releaseSession', resource_type: 'voucher', resource_id: v.id, changes: { before: { code: v.code, session: { key: 'leaving', expiresAt: expect.any(String) } } } },
    ]);
    expect((await c.validate(v.code, { order, session: { key: 'next' } })).body.valid).toBe(true);

    const again = await c.release(v.code, 'leaving');
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
    expect((await c.release(v.code, 'never-seen')).status).toBe(404);
    expect((await c.release('NO-SUCH-CODE', 'next')).status).toBe(404);
    const { rows: afterMisses } = await service.pool.query("SELECT count(*)::int AS n FROM audit_entries WHERE operation = 'redemptions.releaseSession'");
    expect(afterMisses[0].n).toBe(1);
  });

  it('reserves gift credits: other checkouts cannot take them, the session can', async () => {
    const g = await c.giftCard(10_000);
    const reserved = await c.validate(g.code, { amount: 6_000, session: { key: 'gift-1' } });
    expect(reserved.body).toMatchObject({ valid: true, discount: { amount: 6_000 }, session: { key: 'gift-1' } });
    expect(await sessionRows(service, g.id)).toEqual([{ key: 'gift-1', amount: 6_000 }]);

    const tooMuch = await c.validate(g.code, { amount: 5_000 });
    expect(tooMuch.body).toMatchObject({ valid: false, code: 'gift_balance_insufficient', explanations: [{ balance: 4_000, amount: 5_000, reserved: 6_000 }] });
    expect((await c.redeem(g.code, { amount: 5_000 })).body.code).toBe('gift_balance_insufficient');
    expect((await c.validate(g.code, { amount: 4_000 })).body).toMatchObject({ valid: true, voucher: { balance: 4_000 } });
    // Without an amount, a checkout gets what is not reserved.
    expect((await c.validate(g.code, { order })).body).toMatchObject({ valid: true, discount: { amount: 4_000 } });

    expect((await c.redeem(g.code, { amount: 6_000, session: { key: 'gift-1' } })).body.ok).toBe(true);
    expect((await c.redeem(g.code, { amount: 4_000 })).body.ok).toBe(true);
    const { rows } = await service.pool.query('SELECT gift_balance FROM vouchers WHERE id = $1', [g.id]);
    expect(rows[0].gift_balance).toBe(0);
  });

  it('keeps credits reserved from a balance adjustment (409)', async () => {
    const g = await c.giftCard(1_000);
    expect((await c.validate(g.code, { amount: 800, session: { key: 'hold-800' } })).body.valid).toBe(true);
    const taken = await api.post(`/api/v1/vouchers/${g.code}/balance`, { amount: -300, type: 'ADJUSTMENT' });
    expect(taken.status).toBe(409);
    expect((await api.post(`/api/v1/vouchers/${g.code}/balance`, { amount: -200, type: 'ADJUSTMENT' })).status).toBe(200);
  });

  it('lets a stack entry consume its session; a stack without it cannot take a reserved use', async () => {
    const v = await c.voucher({ redemptionLimit: 1 });
    const w = await c.voucher({ redemptionLimit: 5 });
    expect((await c.validate(v.code, { order, session: { key: 'stack-cart' } })).body.valid).toBe(true);
    const without = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: v.code }, { code: w.code }], order, idempotencyKey: randomUUID() });
    expect(without.body).toMatchObject({ ok: false, code: 'redemption_limit_reached' });
    const withSession = await api.post('/api/v1/redemptions/stack', {
      vouchers: [{ code: v.code, session: { key: 'stack-cart' } }, { code: w.code }],
      order,
      idempotencyKey: randomUUID(),
    });
    expect(withSession.body, JSON.stringify(withSession.body)).toMatchObject({ ok: true });
    expect(await sessionRows(service, v.id)).toEqual([]);
    expect((await c.validate(v.code)).body.code).toBe('redemption_limit_reached');
  });

  it('refuses a session to a key that may only read (403), and malformed session fields (400)', async () => {
    const v = await c.voucher({ redemptionLimit: 1 });
    const reader = (await service.newWorkspace(['vouchers:read'])).api;
    expect((await reader.post(`/api/v1/vouchers/${v.code}/validate`, { order, session: {} })).status).toBe(403);
    expect((await reader.post(`/api/v1/vouchers/${v.code}/validate`, { order })).body).toMatchObject({ valid: false, code: 'voucher_not_found' });
    expect((await c.validate(v.code, { order, session: { ttlSeconds: 0 } })).status).toBe(400);
    expect((await c.validate(v.code, { order, session: { ttlSeconds: 604_801 } })).status).toBe(400);
    expect((await c.validate(v.code, { order, session: { key: 'a b' } })).status).toBe(400);
    expect(await sessionRows(service, v.id)).toEqual([]);
  });

  it('gives exactly 5 of 20 racing sessions the 5 uses, which they then redeem', async () => {
    const v = await c.voucher({ redemptionLimit: 5 });
    const keys = Array.from({ length: 20 }, (_, i) => `race-${i}`);
    const validated = await Promise.all(keys.map((key) => c.validate(v.code, { order, session: { key } })));
    expect(validated.every((r) => r.status === 200)).toBe(true);
    const winners = keys.filter((_, i) => validated[i]!.body.valid);
    expect(winners).toHaveLength(5);
    expect(validated.filter((r) => !r.body.valid).every((r) => r.body.code === 'redemption_limit_reached' && !r.body.session)).toBe(true);
    expect((await sessionRows(service, v.id)).map((r) => r.key).sort()).toEqual([...winners].sort());

    const redeemed = await Promise.all(keys.map((key) => c.redeem(v.code, { order, session: { key } })));
    expect(keys.filter((_, i) => redeemed[i]!.body.ok).sort()).toEqual([...winners].sort());
    expect(redeemed.filter((r) => !r.body.ok).every((r) => r.body.code === 'redemption_limit_reached')).toBe(true);
    const { rows } = await service.pool.query('SELECT redeemed_count FROM vouchers WHERE id = $1', [v.id]);
    expect(rows[0].redeemed_count).toBe(5);
    expect(await sessionRows(service, v.id)).toEqual([]);
  });

  it('never reserves past a gift balance when sessions race', async () => {
    const g = await c.giftCard(1_000);
    // A 503 (a lease that lapsed on a starved machine) is sent again with the same session key, as a checkout would.
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => retryingUnavailable(() => c.validate(g.code, { amount: 100, session: { key: `g-${i}` } }), (answer) => JSON.stringify(answer.body))),
    );
    const answers = results.map((r) => ({ status: r.status, valid: r.body.valid, code: r.body.code ?? r.body.reason, unavailable: r.unavailable.length }));
    expect(results.filter((r) => r.body.valid), JSON.stringify(answers)).toHaveLength(10);
    const { rows } = await service.pool.query<{ n: number; total: number }>('SELECT count(*)::int AS n, sum(amount)::int8 AS total FROM voucher_sessions WHERE voucher_id = $1', [g.id]);
    expect(rows[0]).toEqual({ n: 10, total: 1_000 });
  });
});

describe('validation sessions through express alone', () => {
  let service: TestService;
  let c: ReturnType<typeof checkout>;
  beforeAll(async () => {
    service = await startTestService({ hotPath: false });
    c = checkout((await service.newWorkspace()).api);
  });
  afterAll(async () => service?.close());

  it('reserves under a race and redeems with the keys, as the hot path does', async () => {
    const v = await c.voucher({ redemptionLimit: 5 });
    const keys = Array.from({ length: 20 }, (_, i) => `express-${i}`);
    const validated = await Promise.all(keys.map((key) => c.validate(v.code, { order, session: { key } })));
    const winners = keys.filter((_, i) => validated[i]!.body.valid);
    expect(winners).toHaveLength(5);
    expect((await c.redeem(v.code)).body).toMatchObject({ ok: false, code: 'redemption_limit_reached' });
    const redeemed = await Promise.all(winners.map((key) => c.redeem(v.code, { order, session: { key } })));
    expect(redeemed.every((r) => r.body.ok)).toBe(true);
    expect((await c.release(v.code, winners[0]!)).status).toBe(404);
  });
});

describe('validation sessions across restarts and processes', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => service?.close());

  it('keep their reservations when the service restarts', async () => {
    const first = await startTestService({ database: service.db });
    const { key } = await first.newWorkspace();
    const v = await checkout(first.api(key)).voucher({ redemptionLimit: 1 });
    expect((await checkout(first.api(key)).validate(v.code, { order, session: { key: 'survivor' } })).body.valid).toBe(true);
    await first.close();

    const restarted = await startTestService({ database: service.db });
    try {
      const c = checkout(restarted.api(key));
      expect((await c.validate(v.code)).body).toMatchObject({ valid: false, code: 'redemption_limit_reached' });
      expect((await c.redeem(v.code, { order, session: { key: 'survivor' } })).body.ok).toBe(true);
    } finally {
      await restarted.close();
    }
  });

  it('hold against a second service that validated the vouchers before the reservation was made through the first', async () => {
    const second = await startTestService({ database: service.db });
    try {
      const { key } = await service.newWorkspace();
      const a = checkout(service.api(key));
      const b = checkout(second.api(key));
      const v = await a.voucher({ redemptionLimit: 1 });
      const g = await a.giftCard(1_000);
      // The second service caches both vouchers before the reservations are made through the first.
      expect((await b.validate(v.code)).body.valid).toBe(true);
      expect((await b.validate(g.code, { amount: 1_000 })).body.valid).toBe(true);
      expect((await a.validate(v.code, { order, session: { key: 'first' } })).body.valid).toBe(true);
      expect((await a.validate(g.code, { amount: 700, session: { key: 'first' } })).body.valid).toBe(true);

      expect((await b.redeem(v.code)).body).toMatchObject({ ok: false, code: 'redemption_limit_reached' });
      expect((await b.redeem(g.code, { amount: 500 })).body).toMatchObject({ ok: false, code: 'gift_balance_insufficient' });
      // Each code is decided by the one process that leases its slot, whichever service is asked: the reservation
      // is known to it (the SQL guard stays behind it should a cache ever be wrong; test/redemptions/two-processes).
      const [firstLeases, secondLeases] = [(await service.engine.check()).leases, (await second.engine.check()).leases] as Array<{ owned: number[] }>;
      expect(firstLeases!.owned.length + secondLeases!.owned.length).toBeLessThanOrEqual(64);
      expect((await b.validate(v.code, { order, session: { key: 'second' } })).body.code).toBe('redemption_limit_reached');
      expect((await b.redeem(g.code, { amount: 300 })).body.ok).toBe(true);
      expect((await b.redeem(v.code, { order, session: { key: 'first' } })).body.ok).toBe(true);
      expect((await a.redeem(g.code, { amount: 700, session: { key: 'first' } })).body.ok).toBe(true);
    } finally {
      await second.close();
    }
  });
});
