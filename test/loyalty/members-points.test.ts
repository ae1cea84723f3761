// Loyalty members and their points over real HTTP and a real PostgreSQL: joining (409 for a second card), manual
// points, racing spends that never overdraw, FIFO by expiry with refunds into the same buckets, transfers,
// idempotent replays, bounds, tenancy and scopes. After every test the caches equal the ledger and the buckets.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { refundPoints, sweepPoints } from '../../src/domains/loyalty/index.js';
import { withTransaction } from '../../src/platform/database.js';
import { startTestService, type TestService } from '../support/service.js';
import { holdRowLock } from '../support/row-lock.js';
import { addPoints, createCustomer, createProgram, expectLedgerMatchesCaches, joinMember, makeDue, member, transactions } from './support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterEach(async () => expectLedgerMatchesCaches(service.pool));
afterAll(async () => service?.close());

const DAY = 86_400_000;

describe('loyalty members', () => {
  it('makes a customer a member once: a LOYALTY_CARD voucher, 409 for a second card, readable by id, program and customer', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api, { expiration: { type: 'ROLLING', days: 30 } });
    const program = (await api.get(`/api/v1/campaigns/${programId}`)).body;
    expect(program.loyalty).toEqual({ autoJoin: true, expiration: { type: 'ROLLING', days: 30, notifyDaysBefore: 7 } });
    const customerId = await createCustomer(api);

    const created = await api.post(`/api/v1/loyalty/programs/${programId}/members`, { customer: { id: customerId }, code: 'CARD-1' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      programId,
      customerId,
      code: 'CARD-1',
      active: true,
      balance: 0,
      pendingBalance: 0,
      lifetimeEarned: 0,
      expiring: [],
      metadata: {},
      createdAt: expect.stringMatching(/Z$/),
    });
    const voucher = await api.get('/api/v1/vouchers/CARD-1');
    expect(voucher.body).toMatchObject({ type: 'LOYALTY_CARD', campaignId: programId, customerId });

    const again = await api.post(`/api/v1/loyalty/programs/${programId}/members`, { customer: { id: customerId } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    const codeTaken = await api.post(`/api/v1/loyalty/programs/${programId}/members`, { customer: { sourceId: 'someone-else' }, code: 'CARD-1' });
    expect(codeTaken.status).toBe(409);

    expect((await api.get(`/api/v1/loyalty/members/${created.body.id}`)).body).toEqual(created.body);
    const list = await api.get(`/api/v1/loyalty/programs/${programId}/members?limit=10`);
    expect(list.body.data.map((m: { id: string }) => m.id)).toEqual([created.body.id]);
    expect((await api.get(`/api/v1/customers/${customerId}/loyalty`)).body).toEqual({ data: [created.body] });
    // The card stays its customer's: no second card through the vouchers API, no change of owner.
    const secondCard = await api.post('/api/v1/vouchers', { code: 'CARD-2', campaignId: programId, type: 'LOYALTY_CARD', customerId });
    expect(secondCard.status).toBe(409);
    const otherCustomer = await createCustomer(api);
    expect((await api.patch('/api/v1/vouchers/CARD-1', { customerId: otherCustomer })).status).toBe(400);
    const events = await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = 'loyalty.member.created'`, [workspaceId]);
    expect(events.rows.map((r) => r.payload)).toEqual([{ memberId: created.body.id, programId, customerId, code: 'CARD-1', points: 0 }]);
  });

  it('refuses unknown programs, campaigns of other types and foreign workspaces with 404, and missing scopes with 403', async () => {
    const { api } = await service.newWorkspace();
    const other = await service.newWorkspace();
    const programId = await createProgram(api);
    const coupons = await api.create('/api/v1/campaigns', { name: 'coupons', type: 'DISCOUNT_COUPONS' });
    const m = await joinMember(api, programId);
    expect((await api.post(`/api/v1/loyalty/programs/${coupons.id}/members`, { customer: { sourceId: 'x' } })).status).toBe(404);
    expect((await other.api.get(`/api/v1/loyalty/members/${m.id}`)).status).toBe(404);
    expect((await other.api.post(`/api/v1/loyalty/members/${m.id}/points`, { points: 5 })).status).toBe(404);
    expect((await other.api.get(`/api/v1/loyalty/programs/${programId}/members`)).status).toBe(404);
    const reader = await service.newWorkspace(['loyalty:read']);
    expect((await reader.api.post(`/api/v1/loyalty/programs/${programId}/members`, { customer: { sourceId: 'y' } })).status).toBe(403);
    const settingsOnCoupons = await api.post('/api/v1/campaigns', { name: 'x', type: 'DISCOUNT_COUPONS', loyalty: { autoJoin: true } });
    expect(settingsOnCoupons.status).toBe(400);
    const badExpiry = await api.post('/api/v1/campaigns', { name: 'x', type: 'LOYALTY_PROGRAM', loyalty: { expiration: { type: 'ROLLING' } } });
    expect(badExpiry.status).toBe(400);
  });
});

describe('points', () => {
  it('adds and takes points by hand; taking more than the balance is loyalty_points_insufficient and changes nothing', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const m = await joinMember(api, programId);
    const added = await addPoints(api, m.id, 500, { reason: 'welcome' });
    expect(added).toMatchObject({ ok: true, entry: { type: 'ADJUSTMENT', amount: 500, pendingAmount: 0, balanceAfter: 500, reason: 'welcome' }, member: { balance: 500, lifetimeEarned: 0 } });
    const taken = await addPoints(api, m.id, -200);
    expect(taken).toMatchObject({ ok: true, entry: { type: 'ADJUSTMENT', amount: -200, balanceAfter: 300 }, member: { balance: 300 } });
    const refused = await addPoints(api, m.id, -301);
    expect(refused).toMatchObject({ ok: false, code: 'loyalty_points_insufficient' });
    expect((await member(api, m.id)).balance).toBe(300);
    expect((await transactions(api, m.id)).map((e) => e.amount)).toEqual([-200, 500]);
    const adjusted = await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = 'loyalty.points.adjusted' ORDER BY created_at`, [workspaceId]);
    expect(adjusted.rows.map((r) => r.payload.points)).toEqual([500, -200]);
    expect((await api.post(`/api/v1/loyalty/members/${m.id}/points`, { points: 0 })).status).toBe(400);
  });

  it('lets exactly 10 of 40 racing spends of 100 take a balance of 1,000, leaving 0', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const m = await joinMember(api, programId);
    await addPoints(api, m.id, 1_000);
    const outcomes = await Promise.all(Array.from({ length: 40 }, () => api.post(`/api/v1/loyalty/members/${m.id}/points`, { points: -100 })));
    expect(outcomes.every((o) => o.status === 200)).toBe(true);
    expect(outcomes.filter((o) => o.body.ok)).toHaveLength(10);
    expect(outcomes.filter((o) => !o.body.ok).every((o) => o.body.code === 'loyalty_points_insufficient')).toBe(true);
    expect((await member(api, m.id)).balance).toBe(0);
    const entries = await transactions(api, m.id);
    expect(entries.filter((e) => e.amount === -100)).toHaveLength(10);
    expect(Math.min(...entries.map((e) => e.balanceAfter))).toBe(0);
  });

  it('keeps racing writes of one card waiting in turn, not each on a connection: the rest of the service keeps its pool', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const [a, b, c] = [await joinMember(api, programId), await joinMember(api, programId), await joinMember(api, programId)];
    await addPoints(api, a.id, 1_000);
    const held = await holdRowLock(service.db.url, 'vouchers', a.id);
    try {
      // 24 writes of the held card (spends, and transfers to and from it) against the test pool's 10 connections.
      const writes = Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          i % 3 === 0
            ? api.post(`/api/v1/loyalty/members/${a.id}/points`, { points: -10 })
            : i % 3 === 1
              ? api.post(`/api/v1/loyalty/members/${a.id}/transfers`, { toMemberId: b.id, points: 10 })
              : api.post(`/api/v1/loyalty/members/${b.id}/transfers`, { toMemberId: a.id, points: 1 }),
        ),
      );
      expect(await held.lockWaitersOnceWaiting('a write waiting on the card')).toBe(1);
      // A card apart from the transfers' gets written, and a read answers, while the held card's writes wait.
      expect((await api.post(`/api/v1/loyalty/members/${c.id}/points`, { points: 5 })).status).toBe(200);
      expect((await api.get(`/api/v1/loyalty/members/${a.id}`)).status).toBe(200);
      await held.release();
      const outcomes = await writes;
      expect(outcomes.map((o) => o.status)).toEqual(Array(24).fill(200));
      expect(outcomes.every((o) => o.body.ok)).toBe(true);
      const [x, y] = [await member(api, a.id), await member(api, b.id)];
      expect(x.balance).toBe(1_000 - 8 * 10 - 8 * 10 + 8 * 1);
      expect(x.balance + y.balance).toBe(1_000 - 8 * 10);
    } finally {
      await held.end();
    }
  });

  it('spends the earliest-expiring points first, never-expiring last, and a refund refills the very buckets it drew from', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const m = await joinMember(api, programId);
    const soon = new Date(Date.now() + 10 * DAY).toISOString();
    const later = new Date(Date.now() + 20 * DAY).toISOString();
    await addPoints(api, m.id, 100); // never expires
    await addPoints(api, m.id, 100, { expiresAt: later });
    await addPoints(api, m.id, 100, { expiresAt: soon });
    expect((await member(api, m.id)).expiring).toEqual([
      { date: soon, points: 100 },
      { date: later, points: 100 },
    ]);
    const spent = await addPoints(api, m.id, -150);
    expect((await member(api, m.id)).expiring).toEqual([{ date: later, points: 50 }]);
    const buckets = async () =>
      (await service.pool.query(`SELECT expires_at, remaining FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY expires_at NULLS LAST`, [m.id])).rows.map((r) => [
        r.expires_at?.toISOString() ?? null,
        r.remaining,
      ]);
    expect(await buckets()).toEqual([[soon, 0], [later, 50], [null, 100]]);

    const refund = await withTransaction(service.pool, (tx) => refundPoints(tx, workspaceId, spent.entry.id, { type: 'ROLLBACK', source: { type: 'test' }, points: 60 }));
    expect(refund).toMatchObject({ points: 60, balanceAfter: 210 });
    // Latest expiry first: the 50 taken from `later`, then 10 of the 100 taken from `soon`.
    expect(await buckets()).toEqual([[soon, 10], [later, 100], [null, 100]]);
    const rest = await withTransaction(service.pool, (tx) => refundPoints(tx, workspaceId, spent.entry.id, { type: 'ROLLBACK', source: { type: 'test' } }));
    expect(rest?.points).toBe(90);
    expect(await buckets()).toEqual([[soon, 100], [later, 100], [null, 100]]);
    expect(await withTransaction(service.pool, (tx) => refundPoints(tx, workspaceId, spent.entry.id, { type: 'ROLLBACK', source: { type: 'test' } }))).toBeUndefined();
    expect((await member(api, m.id)).balance).toBe(300);
  });

  it('replays an idempotent adjustment with idempotent: true, refusals included; another body with the key is 409', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const m = await joinMember(api, programId);
    const first = await addPoints(api, m.id, 100, { idempotencyKey: 'grant-1' });
    const racing = await Promise.all(Array.from({ length: 5 }, () => api.post(`/api/v1/loyalty/members/${m.id}/points`, { points: 100, idempotencyKey: 'grant-1' })));
    for (const r of racing) expect(r.body).toEqual({ ...first, idempotent: true });
    expect((await member(api, m.id)).balance).toBe(100);
    const conflict = await api.post(`/api/v1/loyalty/members/${m.id}/points`, { points: 101, idempotencyKey: 'grant-1' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe('idempotency_conflict');

    const refused = await addPoints(api, m.id, -500, { idempotencyKey: 'spend-1' });
    expect(refused).toMatchObject({ ok: false, code: 'loyalty_points_insufficient' });
    await addPoints(api, m.id, 1_000);
    const replayed = await addPoints(api, m.id, -500, { idempotencyKey: 'spend-1' });
    expect(replayed).toEqual({ ...refused, idempotent: true });
    const viaHeader = await api.post(`/api/v1/loyalty/members/${m.id}/points`, { points: -100 }, { 'idempotency-key': 'spend-2' });
    const viaHeaderAgain = await api.post(`/api/v1/loyalty/members/${m.id}/points`, { points: -100 }, { 'idempotency-key': 'spend-2' });
    expect(viaHeaderAgain.body).toEqual({ ...viaHeader.body, idempotent: true });
    expect((await member(api, m.id)).balance).toBe(1_000);
  });

  it('transfers active points within a program, keeping their expiry, and refuses overdrafts and other programs', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const otherProgram = await createProgram(api, {}, 'Other');
    const a = await joinMember(api, programId);
    const b = await joinMember(api, programId);
    const c = await joinMember(api, otherProgram);
    const soon = new Date(Date.now() + 5 * DAY).toISOString();
    await addPoints(api, a.id, 100, { expiresAt: soon });
    await addPoints(api, a.id, 100);
    const moved = await api.post(`/api/v1/loyalty/members/${a.id}/transfers`, { toMemberId: b.id, points: 150, idempotencyKey: 't-1' });
    expect(moved.status).toBe(200);
    expect(moved.body.ok).toBe(true);
    expect(moved.body.entries.map((e: any) => [e.type, e.amount, e.expiresAt ?? null])).toEqual([
      ['TRANSFER_OUT', -150, null],
      ['TRANSFER_IN', 100, soon],
      ['TRANSFER_IN', 50, null],
    ]);
    expect(moved.body.member.balance).toBe(50);
    expect((await member(api, b.id)).expiring).toEqual([{ date: soon, points: 100 }]);
    const replay = await api.post(`/api/v1/loyalty/members/${a.id}/transfers`, { toMemberId: b.id, points: 150, idempotencyKey: 't-1' });
    expect(replay.body).toEqual({ ...moved.body, idempotent: true });
    const overdraft = await api.post(`/api/v1/loyalty/members/${a.id}/transfers`, { toMemberId: b.id, points: 51 });
    expect(overdraft.body).toMatchObject({ ok: false, code: 'loyalty_points_insufficient' });
    expect((await api.post(`/api/v1/loyalty/members/${a.id}/transfers`, { toMemberId: c.id, points: 1 })).status).toBe(400);
    expect((await api.post(`/api/v1/loyalty/members/${a.id}/transfers`, { toMemberId: a.id, points: 1 })).status).toBe(400);
    expect((await member(api, b.id)).balance).toBe(150);
  });

  it('runs transfers both ways between two cards at once without deadlock, keeping the sum', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const a = await joinMember(api, programId);
    const b = await joinMember(api, programId);
    await addPoints(api, a.id, 500);
    await addPoints(api, b.id, 500);
    const moves = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? api.post(`/api/v1/loyalty/members/${a.id}/transfers`, { toMemberId: b.id, points: 30 })
          : api.post(`/api/v1/loyalty/members/${b.id}/transfers`, { toMemberId: a.id, points: 20 }),
      ),
    );
    expect(moves.map((m) => m.status)).toEqual(Array(40).fill(200));
    const [x, y] = [await member(api, a.id), await member(api, b.id)];
    expect(x.balance + y.balance).toBe(1_000);
    const movedOut = (r: any, from: string) => (r.body.ok && r.body.member.id === from ? r.body.entries[0].amount : 0);
    expect(x.balance).toBe(500 + moves.reduce((sum, r) => sum + movedOut(r, a.id) - movedOut(r, b.id), 0));
  });

  it('refuses points that would take a balance past 2^53-1 with a 400, and a disabled card with loyalty_member_inactive', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const m = await joinMember(api, programId);
    await addPoints(api, m.id, Number.MAX_SAFE_INTEGER);
    const over = await api.post(`/api/v1/loyalty/members/${m.id}/points`, { points: 1 });
    expect(over.status).toBe(400);
    expect((await member(api, m.id)).balance).toBe(Number.MAX_SAFE_INTEGER);
    expect((await api.post(`/api/v1/vouchers/${m.code}/disable`, {})).status).toBeLessThan(300);
    expect(await addPoints(api, m.id, -1)).toMatchObject({ ok: false, code: 'loyalty_member_inactive' });
  });

  // 1,200 buckets expire in a transaction each: 5.6 s alone on a slow machine, past 30 s beside three other files there.
  it('expires a backlog of more than one batch in one sweep, each bucket once, and a second sweep finds nothing', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await createProgram(api);
    const m = await joinMember(api, programId);
    await service.pool.query(
      `SELECT loyalty_grant($1, $2, 2, 'ADJUSTMENT', NULL, now() + interval '1 hour', 'test', NULL, NULL, NULL, NULL) FROM generate_series(1, 1200)`,
      [workspaceId, m.id],
    );
    await addPoints(api, m.id, -1);
    expect(await makeDue(service.pool, m.id, 'expires_at')).toBe(1_200);
    const [first, second] = await Promise.all([sweepPoints(service.pool), sweepPoints(service.pool)]);
    expect(first.expired + second.expired).toBe(1_200);
    const notices = await service.pool.query(`SELECT 1 FROM events WHERE workspace_id = $1 AND type = 'loyalty.points.expiring'`, [workspaceId]);
    expect(notices.rows).toHaveLength(0); // already past their expiry: expired, never announced
    expect((await sweepPoints(service.pool)).expired).toBe(0);
    expect((await member(api, m.id)).balance).toBe(0);
    const expiredTotal = await service.pool.query(`SELECT sum(amount)::int AS s, count(*)::int AS n FROM loyalty_ledger_entries WHERE member_id = $1 AND type = 'POINTS_EXPIRED'`, [m.id]);
    expect(expiredTotal.rows[0]).toEqual({ s: -2_399, n: 1_200 });
  }, 120_000);

  it('pages the ledger newest first with keyset cursors', async () => {
    const { api } = await service.newWorkspace();
    const programId = await createProgram(api);
    const m = await joinMember(api, programId);
    for (let i = 1; i <= 5; i++) await addPoints(api, m.id, i);
    const first = await api.get(`/api/v1/loyalty/members/${m.id}/transactions?limit=2`);
    expect(first.body.data.map((e: any) => e.amount)).toEqual([5, 4]);
    const second = await api.get(`/api/v1/loyalty/members/${m.id}/transactions?limit=2&cursor=${encodeURIComponent(first.body.next)}`);
    expect(second.body.data.map((e: any) => e.amount)).toEqual([3, 2]);
    expect(second.body.prev).toBeTruthy();
    expect((await api.get(`/api/v1/loyalty/members/${m.id}/transactions?cursor=forged`)).status).toBe(400);
    expect((await createCustomer(api)).length).toBeGreaterThan(0);
  });
});
