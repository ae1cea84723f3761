// Pay with points over real HTTP, the real engine and a real PostgreSQL: a member's code in validate, redemption and
// stack pays like a gift card whose money is its points at the program's pointValue; the redemption records the points
// and a rollback gives them back into the buckets they came from. Racing spends (in the engine and outside it) never
// overdraw. After every test the caches equal the ledger and the buckets.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';
import { lockWaiters } from '../support/row-lock.js';
import { until } from '../support/until.js';
import { addPoints, createCustomer, expectLedgerMatchesCaches, joinMember, member, transactions } from './support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterEach(async () => expectLedgerMatchesCaches(service.pool));
afterAll(async () => service?.close());

/** 100 points are worth 50 cents. */
const POINT_VALUE = { points: 100, amount: 50 };

async function payingProgram(api: ApiClient, pointValue: { points: number; amount: number } | null = POINT_VALUE): Promise<string> {
  const loyalty = pointValue ? { payWithPoints: { pointValue } } : {};
  const program = await api.create('/api/v1/campaigns', { name: `Club ${randomUUID().slice(0, 8)}`, type: 'LOYALTY_PROGRAM', currency: 'EUR', loyalty });
  return program.id;
}

async function memberWith(api: ApiClient, programId: string, points: number, extra: Record<string, unknown> = {}) {
  const card = await joinMember(api, programId);
  if (points > 0) await addPoints(api, card.id, points, extra);
  return card;
}

const order = (amount: number) => ({ id: `o-${randomUUID()}`, amount, currency: 'EUR' });

describe('pay with points', () => {
  it('validates and redeems a member code at the point value, records the points, and gives them back on rollback', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const programId = await payingProgram(api);
    const card = await memberWith(api, programId, 1_000);

    const preview = await api.post(`/api/v1/vouchers/${card.code}/validate`, { order: order(300) });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({
      valid: true,
      discount: { type: 'LOYALTY_POINTS', amount: 300, points: 600 },
      voucher: { code: card.code, type: 'LOYALTY_CARD', balance: 500, points: 1_000 },
      order: { amount: 300, giftAmount: 300, totalAmount: 0 },
    });
    expect((await member(api, card.id)).balance).toBe(1_000);

    const first = await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(300), idempotencyKey: randomUUID() });
    expect(first.body).toMatchObject({ ok: true, redemption: { amount: 300, points: 600, status: 'SUCCEEDED' } });
    expect((await member(api, card.id)).balance).toBe(400);
    const stored = await api.get(`/api/v1/redemptions/${first.body.redemption.id}`);
    expect(stored.body).toMatchObject({ kind: 'POINTS', amount: 300, points: 600 });

    // An order larger than the points are worth takes them all: 400 points pay 200 cents.
    const second = await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(10_000) });
    expect(second.body).toMatchObject({ ok: true, redemption: { amount: 200, points: 400 }, order: { giftAmount: 200, totalAmount: 9_800 } });
    const empty = await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(100) });
    expect(empty.body).toMatchObject({ ok: false, code: 'loyalty_points_insufficient' });

    const rollback = await api.post(`/api/v1/redemptions/${first.body.redemption.id}/rollback`, {});
    expect(rollback.body).toMatchObject({ ok: true });
    expect((await member(api, card.id)).balance).toBe(600);
    const ledger = await transactions(api, card.id);
    expect(ledger.map((e) => [e.type, e.amount])).toEqual([
      ['ROLLBACK', 600],
      ['REDEMPTION', -400],
      ['REDEMPTION', -600],
      ['ADJUSTMENT', 1_000],
    ]);
    const again = await api.post(`/api/v1/redemptions/${first.body.redemption.id}/rollback`, {});
    expect(again.body).toMatchObject({ ok: false, code: 'redemption_already_rolled_back' });
    expect((await member(api, card.id)).balance).toBe(600);

    const spent = await service.pool.query(`SELECT payload FROM events WHERE workspace_id = $1 AND type = 'loyalty.points.spent' ORDER BY created_at`, [workspaceId]);
    expect(spent.rows.map((r) => [r.payload.memberId, r.payload.points, r.payload.amount])).toEqual([
      [card.id, 600, 300],
      [card.id, 400, 200],
    ]);
  });

  it('explains why a card cannot pay: disabled pay-with-points, an inactive card, another customer, too few points', async () => {
    const { api } = await service.newWorkspace();
    const plain = await memberWith(api, await payingProgram(api, null), 1_000);
    expect((await api.post(`/api/v1/vouchers/${plain.code}/validate`, { order: order(100) })).body).toMatchObject({ valid: false, code: 'loyalty_pay_with_points_disabled' });

    const programId = await payingProgram(api);
    const card = await memberWith(api, programId, 1_000);
    const stranger = await createCustomer(api);
    const forStranger = await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(100), customer: { id: stranger } });
    expect(forStranger.body).toMatchObject({ ok: false, code: 'voucher_assigned_to_other_customer' });
    const forOwner = await api.post(`/api/v1/vouchers/${card.code}/validate`, { order: order(100), customer: { id: card.customerId } });
    expect(forOwner.body).toMatchObject({ valid: true, discount: { amount: 100, points: 200 } });
    const tooMuch = await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(1_000), amount: 501 });
    expect(tooMuch.body).toMatchObject({ ok: false, code: 'loyalty_points_insufficient', explanations: [{ points: 1_000, balance: 500, amount: 501 }] });

    expect((await api.patch(`/api/v1/vouchers/${card.code}`, { active: false })).status).toBe(200);
    expect((await api.post(`/api/v1/vouchers/${card.code}/validate`, { order: order(100) })).body).toMatchObject({ valid: false, code: 'loyalty_member_inactive' });
    expect((await member(api, card.id)).balance).toBe(1_000);
  });

  it('sees points earned or taken outside the engine at once (the card is read again for every decision)', async () => {
    const { api } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 200);
    expect((await api.post(`/api/v1/vouchers/${card.code}/validate`, { order: order(1_000) })).body).toMatchObject({ discount: { amount: 100 } });
    await addPoints(api, card.id, 800);
    expect((await api.post(`/api/v1/vouchers/${card.code}/validate`, { order: order(1_000) })).body).toMatchObject({ discount: { amount: 500 } });
    await addPoints(api, card.id, -1_000);
    expect((await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(1_000) })).body).toMatchObject({ ok: false, code: 'loyalty_points_insufficient' });
  });

  it('40 racing redemptions of 100 points from 1,000, with manual debits racing them outside the engine, never overdraw', async () => {
    const { api } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 1_000);
    const redemptions = Array.from({ length: 40 }, () => api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(50), idempotencyKey: randomUUID() }));
    const results = await Promise.all(redemptions);
    for (const r of results) expect(r.status).toBe(200);
    expect(results.filter((r) => r.body.ok)).toHaveLength(10);
    expect(results.filter((r) => !r.body.ok).every((r) => r.body.code === 'loyalty_points_insufficient')).toBe(true);
    expect((await member(api, card.id)).balance).toBe(0);

    // Outside writers (manual debits through the ledger functions) race the engine on a refilled card.
    await addPoints(api, card.id, 1_000);
    const mixed = await Promise.all([
      ...Array.from({ length: 20 }, () => api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(50) })),
      ...Array.from({ length: 20 }, () => api.post(`/api/v1/loyalty/members/${card.id}/points`, { points: -100 })),
    ]);
    for (const r of mixed) expect(r.status).toBe(200);
    const succeeded = mixed.filter((r) => r.body.ok).length;
    expect(succeeded).toBe(10);
    expect((await member(api, card.id)).balance).toBe(0);
    const ledger = await transactions(api, card.id);
    expect(ledger.reduce((sum, e) => sum + e.amount, 0)).toBe(0);
  });

  it('a redemption is not starved by a stream of debits outside the engine: after two tries it decides under the card’s lock', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 1_000);
    // The order is worth more than the card: every decision takes the whole balance, so 2 points (1 cent) debited while the
    // engine's statement waits for the card makes it stale. Each outside debit locks the card and holds, uncommitted,
    // until the engine waits behind it; the next one queues behind the engine before it commits. An engine that decides
    // on what it read before taking the card's lock finds the card changed every time: 6 tries, then a 503.
    const monitor = new pg.Client({ connectionString: service.db.url });
    const writers = Array.from({ length: 9 }, () => new pg.Client({ connectionString: service.db.url }));
    await Promise.all([monitor, ...writers].map((c) => c.connect()));
    const pids = writers.map((w) => (w as unknown as { processID: number }).processID);
    const lockWaiting = (which: 'others' | number) => lockWaiters(monitor, which === 'others' ? { except: pids } : { only: [pids[which]!] });
    let made = 0;
    const debitAndHold = async (w: pg.Client) => {
      await w.query('BEGIN');
      await w.query('SELECT 1 FROM vouchers WHERE id = $1 FOR UPDATE', [card.id]);
      made += (await w.query(`SELECT * FROM loyalty_debit($1, $2, 2, 'ADJUSTMENT', 'api', NULL, NULL, 'outside')`, [workspaceId, card.id])).rowCount ?? 0;
    };
    try {
      await debitAndHold(writers[0]!);
      let answered = false;
      const redemption = api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(10_000), idempotencyKey: randomUUID() }).finally(() => (answered = true));
      let holder = 0;
      while (holder + 1 < writers.length) {
        await until(async () => answered || (await lockWaiting('others')) > 0, 10_000, 'the engine waiting for the card');
        if (answered) break;
        const next = debitAndHold(writers[holder + 1]!);
        await until(async () => (await lockWaiting(holder + 1)) > 0, 10_000, 'the next debit queued behind the engine');
        await writers[holder]!.query('COMMIT');
        await next;
        holder++;
      }
      await writers[holder]!.query('COMMIT');
      const res = await redemption;
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ ok: true });
      // It was made stale at least twice, then took what the committed debits left, and the debits after it found none.
      expect(made).toBeGreaterThanOrEqual(3);
      expect(res.body.redemption.points).toBe(1_000 - 2 * made);
      expect((await member(api, card.id)).balance).toBe(0);
    } finally {
      await Promise.all(writers.map((w) => w.query('ROLLBACK').catch(() => undefined).then(() => w.end())));
      await monitor.end();
    }
  });

  it('pays in a stack after a discount, and a failed stack takes no points; each redemption of the stack rolls back alone', async () => {
    const { api } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 1_000);
    const discount = await api.create('/api/v1/vouchers', { code: `TEN-${randomUUID().slice(0, 6)}`, type: 'DISCOUNT', currency: 'EUR', discount: { type: 'AMOUNT', amountOff: 100 } });

    const failed = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: discount.code }, { code: card.code }, { code: 'NO-SUCH-CODE' }], order: order(400), idempotencyKey: randomUUID() });
    expect(failed.body).toMatchObject({ ok: false, code: 'voucher_not_found' });
    expect((await member(api, card.id)).balance).toBe(1_000);

    // Ties in priority apply in request order: the discount first, then the points pay what is left.
    const stack = await api.post('/api/v1/redemptions/stack', { vouchers: [{ code: discount.code }, { code: card.code }], order: order(400), idempotencyKey: randomUUID() });
    expect(stack.body).toMatchObject({ ok: true, order: { discountAmount: 100, giftAmount: 300, totalAmount: 0 } });
    const paid = stack.body.results.find((r: { voucherCode: string }) => r.voucherCode === card.code);
    expect(paid).toMatchObject({ ok: true, amount: 300 });
    expect((await member(api, card.id)).balance).toBe(400);
    expect((await api.get(`/api/v1/redemptions/${paid.redemptionId}`)).body).toMatchObject({ kind: 'POINTS', points: 600, stackId: stack.body.stackId });

    expect((await api.post(`/api/v1/redemptions/${paid.redemptionId}/rollback`, {})).body).toMatchObject({ ok: true });
    expect((await member(api, card.id)).balance).toBe(1_000);
  });

  it('gives points back into the buckets they came from, even when spent across buckets of different expiry', async () => {
    const { api } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 0);
    const soon = new Date(Date.now() + 5 * 86_400_000).toISOString();
    const later = new Date(Date.now() + 50 * 86_400_000).toISOString();
    await addPoints(api, card.id, 300, { expiresAt: later });
    await addPoints(api, card.id, 300, { expiresAt: soon });
    const paid = await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(200) });
    expect(paid.body).toMatchObject({ ok: true, redemption: { points: 400 } });
    // First in, first out by expiry: the bucket expiring soon is emptied first.
    const drawn = await service.pool.query(`SELECT expires_at, remaining FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY expires_at`, [card.id]);
    expect(drawn.rows.map((r) => Number(r.remaining))).toEqual([0, 200]);
    await api.post(`/api/v1/redemptions/${paid.body.redemption.id}/rollback`, {});
    const refilled = await service.pool.query(`SELECT remaining FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY expires_at`, [card.id]);
    expect(refilled.rows.map((r) => Number(r.remaining))).toEqual([300, 300]);
  });

  it('payments racing on one card are debited together per batch: each keeps its entry, balance and draws across buckets', async () => {
    const { api } = await service.newWorkspace();
    const programId = await payingProgram(api);
    const card = await memberWith(api, programId, 0);
    const day = 86_400_000;
    await addPoints(api, card.id, 250, { expiresAt: new Date(Date.now() + 5 * day).toISOString() });
    await addPoints(api, card.id, 250, { expiresAt: new Date(Date.now() + 20 * day).toISOString() });
    await addPoints(api, card.id, 500, { expiresAt: new Date(Date.now() + 50 * day).toISOString() });
    // 150 points each (75 cents): six of thirty fit in 1,000 and a seventh pays the last 100, as a gift card would;
    // several land in one batch, drawing across bucket ends.
    const results = await Promise.all(Array.from({ length: 30 }, () => api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(75), idempotencyKey: randomUUID() })));
    expect(results.filter((r) => r.body.ok).map((r) => r.body.redemption.points).sort()).toEqual([100, 150, 150, 150, 150, 150, 150]);
    expect(results.filter((r) => !r.body.ok).every((r) => r.body.code === 'loyalty_points_insufficient')).toBe(true);
    expect((await member(api, card.id)).balance).toBe(0);

    const spent = (await transactions(api, card.id)).filter((e) => e.type === 'REDEMPTION').reverse();
    const running = [1, 2, 3, 4, 5, 6].map((n) => [-150, 1_000 - 150 * n]);
    expect(spent.map((e) => [e.amount, e.balanceAfter])).toEqual([...running, [-100, 0]]);
    // What each payment drew: a draw row per bucket for the two that span buckets (the second and the fourth), the
    // entry's own bucket_id for the five drawn from one (schema/0074).
    const draws = await service.pool.query<{ entry_id: string; bucket_id: string; points: string; row: boolean }>(
      `SELECT e.id AS entry_id, coalesce(d.bucket_id, e.bucket_id) AS bucket_id, coalesce(d.points, -e.amount) AS points, d.entry_id IS NOT NULL AS row
         FROM loyalty_ledger_entries e LEFT JOIN loyalty_point_draws d ON d.entry_id = e.id
        WHERE e.member_id = $1 AND e.type = 'REDEMPTION'`,
      [card.id],
    );
    for (const entry of spent) expect(draws.rows.filter((d) => d.entry_id === entry.id).reduce((a, d) => a + Number(d.points), 0)).toBe(-entry.amount);
    expect(spent.map((entry) => draws.rows.filter((d) => d.entry_id === entry.id && d.row).length)).toEqual([0, 2, 0, 2, 0, 0, 0]);
    expect(draws.rows.every((d) => d.bucket_id !== null)).toBe(true);
    const buckets = await service.pool.query(`SELECT remaining FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY expires_at`, [card.id]);
    expect(buckets.rows.map((r) => Number(r.remaining))).toEqual([0, 0, 0]);
    const rollup = await service.pool.query(`SELECT sum(spent)::bigint AS spent FROM loyalty_point_rollups WHERE program_id = $1`, [programId]);
    expect(Number(rollup.rows[0].spent)).toBe(1_000);

    // The second payment drew 100 from the first bucket and 50 from the second: its rollback gives back exactly those.
    const redemption = await service.pool.query(`SELECT id FROM redemptions WHERE points_entry_id = $1`, [spent[1]!.id]);
    expect((await api.post(`/api/v1/redemptions/${redemption.rows[0].id}/rollback`, {})).body).toMatchObject({ ok: true });
    const refilled = await service.pool.query(`SELECT remaining FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY expires_at`, [card.id]);
    expect(refilled.rows.map((r) => Number(r.remaining))).toEqual([100, 50, 0]);
  });

  it('a payment drawn from one bucket writes no draw row: its entry names the bucket, and refunds in parts go back into it', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 0);
    await addPoints(api, card.id, 300, { expiresAt: new Date(Date.now() + 50 * 86_400_000).toISOString() });
    await addPoints(api, card.id, 300, { expiresAt: new Date(Date.now() + 5 * 86_400_000).toISOString() });
    const paid = await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(100) });
    expect(paid.body).toMatchObject({ ok: true, redemption: { points: 200 } });
    const entry = await service.pool.query(
      `SELECT e.id, e.bucket_id, b.expires_at FROM redemptions r JOIN loyalty_ledger_entries e ON e.id = r.points_entry_id
         JOIN loyalty_point_buckets b ON b.id = e.bucket_id WHERE r.id = $1`,
      [paid.body.redemption.id],
    );
    // The soonest expiring bucket paid it all, and no draw row was written.
    expect(entry.rows).toHaveLength(1);
    expect(new Date(entry.rows[0].expires_at).getTime()).toBeLessThan(Date.now() + 6 * 86_400_000);
    const rowsOf = async () => (await service.pool.query(`SELECT bucket_id, points, refunded FROM loyalty_point_draws WHERE entry_id = $1`, [entry.rows[0].id])).rows;
    expect(await rowsOf()).toEqual([]);
    const remaining = async () =>
      (await service.pool.query(`SELECT remaining FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY expires_at`, [card.id])).rows.map((r) => Number(r.remaining));
    expect(await remaining()).toEqual([100, 300]);

    // A refund of part (as an order return gives) writes the draw row once and gives back into that bucket; the rest after.
    const refund = (points: number | null) =>
      service.pool.query(`SELECT * FROM loyalty_refund($1, $2, 'ROLLBACK', 'test', 'part', $3)`, [workspaceId, entry.rows[0].id, points]);
    expect((await refund(50)).rows[0]).toMatchObject({ points: 50 });
    expect(await rowsOf()).toEqual([{ bucket_id: entry.rows[0].bucket_id, points: 200, refunded: 50 }]);
    expect(await remaining()).toEqual([150, 300]);
    expect((await refund(null)).rows[0]).toMatchObject({ points: 150 });
    expect(await rowsOf()).toEqual([{ bucket_id: entry.rows[0].bucket_id, points: 200, refunded: 200 }]);
    expect(await remaining()).toEqual([300, 300]);
    expect((await refund(null)).rows).toEqual([]);
    expect((await member(api, card.id)).balance).toBe(600);
  });

  it('locks only the buckets a payment draws from: a bucket held elsewhere past them does not hold it up', async () => {
    const { api } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 0);
    const day = 86_400_000;
    for (const days of [5, 20, 50]) await addPoints(api, card.id, 100, { expiresAt: new Date(Date.now() + days * day).toISOString() });
    const latest = await service.pool.query<{ id: string }>(`SELECT id FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY expires_at DESC LIMIT 1`, [card.id]);
    const holder = await service.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM loyalty_point_buckets WHERE id = $1 FOR UPDATE`, [latest.rows[0]!.id]);
      // 150 points reach the first two buckets only; a debit that locked all of the card's would wait for this holder.
      const paid = await Promise.race([
        api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(75) }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the payment waited for a bucket it does not draw from')), 5_000)),
      ]);
      expect(paid.body).toMatchObject({ ok: true, redemption: { points: 150 } });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const buckets = await service.pool.query(`SELECT remaining FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY expires_at`, [card.id]);
    expect(buckets.rows.map((r) => Number(r.remaining))).toEqual([0, 50, 100]);
  });

  it('a payment whose buckets change while it waits for the card draws from the buckets as they are at commit', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 0);
    await addPoints(api, card.id, 300, { expiresAt: new Date(Date.now() + 5 * 86_400_000).toISOString() });
    const mover = await service.pool.connect();
    let payment: Promise<{ body: Record<string, any> }> | undefined;
    try {
      // Another writer of points holds the card: it spends the 300 of the old bucket and grants 300 in a new one.
      await mover.query('BEGIN');
      await mover.query(`SELECT loyalty_lock_card($1, $2)`, [workspaceId, card.id]);
      const moverPid = (await mover.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid`)).rows[0]!.pid;
      payment = api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(150) });
      // The engine decided on 300 points and its statement (begun, so its snapshot taken) waits for the card.
      await until(
        async () => (await service.pool.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE 'WITH fence%'`, [moverPid])).rowCount,
        10_000,
        'the payment waiting for the card',
      );
      await mover.query(`SELECT * FROM loyalty_debit($1, $2, 300, 'ADJUSTMENT', 'api', NULL, NULL, 'moved')`, [workspaceId, card.id]);
      await mover.query(`SELECT * FROM loyalty_grant($1, $2, 300, 'ADJUSTMENT', NULL, NULL, 'api', NULL, NULL, NULL, 'moved')`, [workspaceId, card.id]);
      await mover.query('COMMIT');
    } finally {
      mover.release();
    }
    // The new bucket was not in the statement's snapshot: the buckets it saw fell short, the batch was decided again.
    expect((await payment!).body).toMatchObject({ ok: true, redemption: { points: 300 } });
    expect((await member(api, card.id)).balance).toBe(0);
    const buckets = await service.pool.query(`SELECT remaining FROM loyalty_point_buckets WHERE member_id = $1 ORDER BY created_at`, [card.id]);
    expect(buckets.rows.map((r) => Number(r.remaining))).toEqual([0, 0]);
  });

  it('rolls back a payment on a card gone below 0 since (an ALLOW_NEGATIVE reversal): the points come back against the debt', async () => {
    const { api, workspaceId } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 0);
    await service.pool.query(`SELECT * FROM loyalty_earn($1, $2, 1000, NULL, NULL, 'test', NULL, NULL, $3, $4)`, [workspaceId, card.id, randomUUID(), `test:${randomUUID()}`]);
    const paid = await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(400) });
    expect(paid.body).toMatchObject({ ok: true, redemption: { points: 800 } });
    const earning = await service.pool.query<{ id: string }>(`SELECT id FROM loyalty_earnings WHERE member_id = $1`, [card.id]);
    await service.pool.query(`SELECT * FROM loyalty_reverse_earning($1, $2, 'ALLOW_NEGATIVE', 'test', NULL)`, [workspaceId, earning.rows[0]!.id]);
    expect((await member(api, card.id)).balance).toBe(-800);
    // The rollback takes no points: a card's balance below 0 must not make it stale.
    const rolled = await api.post(`/api/v1/redemptions/${paid.body.redemption.id}/rollback`, {});
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    expect(rolled.body).toMatchObject({ ok: true });
    expect((await member(api, card.id)).balance).toBe(0);
  });

  it('writes each paying redemption once, with its points and its ledger entry (no update after the debit)', async () => {
    const { api } = await service.newWorkspace();
    const programId = await payingProgram(api);
    const card = await memberWith(api, programId, 10_000);
    // Every update of a redemption's points or entry id is logged while this test runs.
    const log = `points_updates_${randomUUID().slice(0, 8)}`;
    await service.pool.query(`CREATE TABLE ${log} (id uuid)`);
    await service.pool.query(`CREATE FUNCTION ${log}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO ${log} VALUES (NEW.id); RETURN NEW; END $$`);
    await service.pool.query(`CREATE TRIGGER ${log} BEFORE UPDATE OF points, points_entry_id ON redemptions FOR EACH ROW EXECUTE FUNCTION ${log}()`);
    try {
      const results = await Promise.all(Array.from({ length: 20 }, () => api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(50), idempotencyKey: randomUUID() })));
      expect(results.every((r) => r.body.ok)).toBe(true);
      expect((await service.pool.query(`SELECT count(*)::int AS n FROM ${log}`)).rows[0].n).toBe(0);
    } finally {
      await service.pool.query(`DROP TRIGGER ${log} ON redemptions; DROP FUNCTION ${log}(); DROP TABLE ${log}`);
    }
    const { rows } = await service.pool.query<{ points: string; source_id: string; id: string; amount: string }>(
      `SELECT r.points, e.source_id, r.id, e.amount FROM redemptions r JOIN loyalty_ledger_entries e ON e.id = r.points_entry_id WHERE r.voucher_id = $1`,
      [card.id],
    );
    expect(rows).toHaveLength(20);
    for (const row of rows) {
      expect(row.source_id).toBe(row.id);
      expect(Number(row.amount)).toBe(-Number(row.points));
    }
  });

  it('a validation session reserves the points it would take; another checkout cannot use them', async () => {
    const { api } = await service.newWorkspace();
    const card = await memberWith(api, await payingProgram(api), 1_000);
    const reserved = await api.post(`/api/v1/vouchers/${card.code}/validate`, { order: order(400), session: { key: 'checkout-a' } });
    expect(reserved.body).toMatchObject({ valid: true, discount: { amount: 400, points: 800 }, session: { key: 'checkout-a' } });
    const other = await api.post(`/api/v1/vouchers/${card.code}/validate`, { order: order(400) });
    expect(other.body).toMatchObject({ valid: true, discount: { amount: 100, points: 200 }, voucher: { points: 200 } });
    const own = await api.post(`/api/v1/vouchers/${card.code}/redemption`, { order: order(400), session: { key: 'checkout-a' } });
    expect(own.body).toMatchObject({ ok: true, redemption: { amount: 400, points: 800 } });
    expect((await member(api, card.id)).balance).toBe(200);
  });
});
