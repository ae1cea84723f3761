// The writes the engine commits (rollbacks, balance adjustments) each leave exactly one audit entry, written in the
// partition's batch: never for a refusal or a replay, never twice for racing requests or a batch retried after a guard.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, ApiResponse } from '../support/api-client.js';
import { startTestService, type TestService } from '../support/service.js';

interface EntryRow {
  operation: string;
  resource_type: string;
  resource_id: string;
  changes: unknown;
  actor_type: string;
  actor_id: string;
  actor_label: string;
  request_id: string;
}

describe.each([
  ['the hot-path dispatcher', true],
  ['express', false],
])('audit entries of engine writes, served by %s', (_face, hotPath) => {
  let service: TestService;
  let api: ApiClient;
  let workspaceId: string;
  let keyId: string;
  beforeAll(async () => {
    service = await startTestService({ hotPath });
    ({ api, workspaceId } = await service.newWorkspace());
    keyId = (await service.pool.query<{ id: string }>('SELECT id FROM api_keys WHERE workspace_id = $1', [workspaceId])).rows[0]!.id;
  });
  afterAll(async () => service?.close());

  async function giftCard(amount: number) {
    return api.create<{ code: string; id: string }>('/api/v1/vouchers', { code: `G-${randomUUID().slice(0, 12)}`, type: 'GIFT_CARD', gift: { amount, currency: 'EUR' } });
  }
  async function redeemed(code: string, amount: number): Promise<string> {
    const res = await api.post(`/api/v1/vouchers/${code}/redemption`, { amount });
    expect(res.body, JSON.stringify(res.body)).toMatchObject({ ok: true });
    return res.body.redemption.id;
  }
  const rollback = (id: string, body: Record<string, unknown> = {}) => api.post(`/api/v1/redemptions/${id}/rollback`, body);
  const adjust = (code: string, body: Record<string, unknown>) => api.post(`/api/v1/vouchers/${code}/balance`, body);
  const requestIdOf = (res: ApiResponse) => res.headers.get('x-request-id');

  /** The entries of the engine's writes on a resource (its creation has an entry of its own). */
  async function entriesOf(resourceId: string): Promise<EntryRow[]> {
    const { rows } = await service.pool.query<EntryRow>(
      `SELECT operation, resource_type, resource_id, changes, actor_type, actor_id, actor_label, request_id
         FROM audit_entries
        WHERE workspace_id = $1 AND resource_id = $2 AND operation IN ('redemptions.rollback', 'vouchers.adjustBalance')
        ORDER BY created_at`,
      [workspaceId, resourceId],
    );
    return rows;
  }
  async function adjustmentEventsOf(voucherId: string) {
    const { rows } = await service.pool.query<{ payload: Record<string, unknown> }>(
      "SELECT payload FROM events WHERE workspace_id = $1 AND type = 'voucher.balance.adjusted' AND payload->>'voucherId' = $2 ORDER BY id",
      [workspaceId, voucherId],
    );
    return rows.map((r) => r.payload);
  }
  const byTheKey = (requestId: string | null) => ({ actor_type: 'api_key', actor_id: keyId, actor_label: expect.stringMatching(/.+/), request_id: requestId });

  it('a rollback writes one entry naming its actor and the response request id', async () => {
    const card = await giftCard(1000);
    const id = await redeemed(card.code, 300);
    const res = await rollback(id, { reason: 'returned' });
    expect(res.body).toMatchObject({ ok: true });
    expect(requestIdOf(res)).toEqual(expect.any(String));
    expect(await entriesOf(id)).toEqual([
      {
        operation: 'redemptions.rollback',
        resource_type: 'redemption',
        resource_id: id,
        changes: { after: { id: res.body.rollback.id, redemptionId: id, voucherCode: card.code, amount: 300, reason: 'returned' } },
        ...byTheKey(requestIdOf(res)),
      },
    ]);
  });

  it('a refused second rollback and an idempotent replay write no entry', async () => {
    const card = await giftCard(1000);
    const id = await redeemed(card.code, 100);
    const idempotencyKey = randomUUID();
    const first = await rollback(id, { idempotencyKey });
    expect(first.body).toMatchObject({ ok: true });
    expect((await rollback(id, { idempotencyKey })).body).toMatchObject({ ok: true, idempotent: true, rollback: { id: first.body.rollback.id } });
    expect((await rollback(id)).body).toMatchObject({ ok: false, code: 'redemption_already_rolled_back' });
    expect((await rollback(id, { idempotencyKey: randomUUID() })).body).toMatchObject({ ok: false, code: 'redemption_already_rolled_back' });
    const entries = await entriesOf(id);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.request_id).toBe(requestIdOf(first));
  });

  it('20 racing rollbacks of one redemption write exactly one entry, that of the one that succeeded', async () => {
    const card = await giftCard(1000);
    const id = await redeemed(card.code, 250);
    const answers = await Promise.all(Array.from({ length: 20 }, () => rollback(id)));
    const succeeded = answers.filter((res) => res.body.ok === true);
    expect(succeeded).toHaveLength(1);
    expect(answers.filter((res) => res.body.code === 'redemption_already_rolled_back')).toHaveLength(19);
    const entries = await entriesOf(id);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.request_id).toBe(requestIdOf(succeeded[0]!));
  });

  it('an adjustment writes one entry with the balance before and after, and its voucher.balance.adjusted event', async () => {
    const card = await giftCard(100);
    const res = await adjust(card.code, { amount: 250 });
    expect(res.body).toMatchObject({ balance: 350 });
    expect(await entriesOf(card.id)).toEqual([
      {
        operation: 'vouchers.adjustBalance',
        resource_type: 'voucher',
        resource_id: card.id,
        changes: { before: { balance: 100 }, after: { balance: 350, amount: 250, entryType: 'CREDITS_ADDED' } },
        ...byTheKey(requestIdOf(res)),
      },
    ]);
    expect(await adjustmentEventsOf(card.id)).toEqual([{ voucherId: card.id, code: card.code, amount: 250, balance: 350, entryType: 'CREDITS_ADDED' }]);

    // A refused adjustment (the balance would fall below 0) commits neither an entry nor an event.
    expect((await adjust(card.code, { amount: -1000, type: 'ADJUSTMENT' })).status).toBe(409);
    expect(await entriesOf(card.id)).toHaveLength(1);
    expect(await adjustmentEventsOf(card.id)).toHaveLength(1);
  });

  it('a batch retried after a failed guard writes its entries and events once', async () => {
    const guardRetries = async () =>
      ((await service.engine.check()).partitions as Array<{ guardRetries?: number }>).reduce((sum, p) => sum + (p.guardRetries ?? 0), 0);
    const card = await giftCard(1000);
    const id = await redeemed(card.code, 400);
    // A settings change the partition is not told of: its cached version fails the guard, and the batch is decided again.
    await service.pool.query('UPDATE vouchers SET priority = coalesce(priority, 0) + 1 WHERE id = $1', [card.id]);
    const retriesBefore = await guardRetries();
    const [rolled, adjusted] = await Promise.all([rollback(id), adjust(card.code, { amount: -100, type: 'ADJUSTMENT' })]);
    expect(rolled.body).toMatchObject({ ok: true });
    expect(adjusted.status).toBe(200);
    expect(await guardRetries()).toBeGreaterThan(retriesBefore);
    expect((await service.pool.query('SELECT gift_balance FROM vouchers WHERE id = $1', [card.id])).rows[0].gift_balance).toBe(900);

    expect(await entriesOf(id)).toEqual([expect.objectContaining({ operation: 'redemptions.rollback', request_id: requestIdOf(rolled) })]);
    const adjustments = await entriesOf(card.id);
    expect(adjustments).toEqual([expect.objectContaining({ operation: 'vouchers.adjustBalance', request_id: requestIdOf(adjusted) })]);
    // Whatever the order of the two in the batch, the entry shows the balance around its own change.
    const { before, after } = adjustments[0]!.changes as { before: { balance: number }; after: { balance: number } };
    expect(after.balance - before.balance).toBe(-100);
    expect(await adjustmentEventsOf(card.id)).toEqual([expect.objectContaining({ amount: -100, balance: after.balance, entryType: 'ADJUSTMENT' })]);
  });
});
