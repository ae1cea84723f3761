// Bounds of money: no gift balance, ledger entry or sum passes 2^53-1 (the largest integer a JSON number carries
// exactly). An operation whose result would is refused (4xx), checked in the partition and guarded in SQL; reads of
// the card, its ledger and the voucher list keep answering.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommitStatements } from '../../src/engine/partition/batch-commit.sql.js';
import type { ApiClient } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

const statements = new CommitStatements();

const MAX = Number.MAX_SAFE_INTEGER;

let service: TestService;
let api: ApiClient;
beforeAll(async () => {
  service = await startTestService();
  ({ api } = await service.newWorkspace());
});
afterAll(async () => service?.close());

async function giftCard(amount: number) {
  const res = await api.post('/api/v1/vouchers', { code: `B-${randomUUID().slice(0, 12)}`, type: 'GIFT_CARD', gift: { amount, currency: 'EUR' } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { code: string; id: string };
}

const topUp = (code: string, amount: number, type = 'CREDITS_ADDED') => api.post(`/api/v1/vouchers/${code}/balance`, { amount, type });

async function expectReadable(code: string, balance: number) {
  const card = await api.get(`/api/v1/vouchers/${code}`);
  expect(card.status, JSON.stringify(card.body)).toBe(200);
  expect(card.body.gift.balance).toBe(balance);
  const ledger = await api.get(`/api/v1/vouchers/${code}/transactions?limit=100`);
  expect(ledger.status, JSON.stringify(ledger.body)).toBe(200);
  expect(ledger.body.data.reduce((sum: number, e: { amount: number }) => sum + e.amount, 0)).toBe(balance);
  expect(ledger.body.data[0].balanceAfter).toBe(balance);
  const list = await api.get('/api/v1/vouchers?limit=100');
  expect(list.status, JSON.stringify(list.body)).toBe(200);
}

describe('bounds of gift balances', () => {
  it('refuses a top-up of 2^53-1 on a 5,000 card (400 naming body.amount); the card, its ledger and the list still answer', async () => {
    const g = await giftCard(5_000);
    const refused = await topUp(g.code, MAX);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'invalid_request', errors: [{ path: 'body.amount' }] });
    expect(refused.body.detail).toContain(String(MAX - 5_000));
    await expectReadable(g.code, 5_000);
    expect((await api.post(`/api/v1/vouchers/${g.code}/validate`, { amount: 5_000 })).body.valid).toBe(true);
  });

  it('takes a card exactly to 2^53-1 and no further, by top-up or by adjustment', async () => {
    const g = await giftCard(5_000);
    const filled = await topUp(g.code, MAX - 5_000);
    expect(filled.status, JSON.stringify(filled.body)).toBe(200);
    expect(filled.body).toMatchObject({ balance: MAX, entry: { balanceAfter: MAX } });
    expect((await topUp(g.code, 1)).status).toBe(400);
    expect((await topUp(g.code, 1, 'ADJUSTMENT')).status).toBe(400);
    await expectReadable(g.code, MAX);
    expect((await api.post(`/api/v1/vouchers/${g.code}/redemption`, { amount: 1 })).body.ok).toBe(true);
    expect((await topUp(g.code, 1)).status).toBe(200);
    await expectReadable(g.code, MAX);
  });

  it('refuses a rollback whose credits would lift the balance past 2^53-1 (409), leaving the redemption as it was', async () => {
    const g = await giftCard(5_000);
    const redeemed = await api.post(`/api/v1/vouchers/${g.code}/redemption`, { amount: 100 });
    expect(redeemed.body.ok).toBe(true);
    expect((await topUp(g.code, MAX - 4_900)).status).toBe(200);
    const rollback = await api.post(`/api/v1/redemptions/${redeemed.body.redemption.id}/rollback`, {});
    expect(rollback.status).toBe(409);
    expect((await api.get(`/api/v1/redemptions/${redeemed.body.redemption.id}`)).body.status).toBe('SUCCEEDED');
    await expectReadable(g.code, MAX);
  });

  it('guards the bound in SQL: a batch lifting a balance past it fails its guard; a direct write fails its CHECK', async () => {
    const g = await giftCard(5_000);
    const { rows } = await service.pool.query('SELECT config_version FROM vouchers WHERE id = $1', [g.id]);
    const result = await statements.commit(service.pool, {
      keys: [],
      rollbackIds: [],
      deltas: [{ id: g.id, uses: 0, balance: MAX, points: 0, configVersion: rows[0].config_version, campaignVersion: null }],
      usage: [],
      usageLimits: [],
      redemptions: [],
      rollbacks: [],
      ledger: [],
      events: [],
      budgets: [],
      sessions: [],
    });
    expect(result).toEqual({ ok: false, failed: 'vouchers' });
    await expect(service.pool.query('UPDATE vouchers SET gift_balance = gift_balance + $2::int8 WHERE id = $1', [g.id, MAX])).rejects.toMatchObject({ code: '23514' });
    await expectReadable(g.code, 5_000);
  });

  it('reads a ledger entry written past the bound before the bounds existed as the bound, without failing', async () => {
    const g = await giftCard(5_000);
    // Older data: the constraint (NOT VALID, so old rows stay) is lifted for this test database only.
    await service.pool.query('ALTER TABLE gift_ledger_entries DROP CONSTRAINT gift_ledger_entries_within_safe_range');
    await service.pool.query(
      `INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after, created_at)
       SELECT workspace_id, id, 'ADJUSTMENT', 0, 9007199254745000, now() - interval '1 hour' FROM vouchers WHERE id = $1`,
      [g.id],
    );
    const ledger = await api.get(`/api/v1/vouchers/${g.code}/transactions`);
    expect(ledger.status).toBe(200);
    expect(ledger.body.data.map((e: { balanceAfter: number }) => e.balanceAfter)).toEqual([5_000, MAX]);
  });
});
