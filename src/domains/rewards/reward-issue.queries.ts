// SQL of what rewards issue and take back: the customer's gift card credited (with its CREDITS_ADDED entry) or
// debited, an issued voucher disabled, and a reward's pool of codes (its stock the count of codes left). Callers hold
// the reward's row lock, so stock and pool agree, and lock the vouchers they change in id order.
import type { Sql } from '../../platform/database.js';

const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;

/** Locks voucher rows in id order, as the engine's batches do: a reward redemption never deadlocks with them. */
export async function lockVoucherRows(tx: Sql, workspaceId: string, ids: string[]): Promise<void> {
  await tx.query('SELECT id FROM vouchers WHERE workspace_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE', [workspaceId, ids]);
}

/** The customer's oldest active gift card of a campaign: the one rewards credit. */
export async function findCustomerGiftCard(db: Sql, workspaceId: string, campaignId: string, customerId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM vouchers WHERE workspace_id = $1 AND campaign_id = $2 AND customer_id = $3 AND type = 'GIFT_CARD' AND active
      ORDER BY created_at, id LIMIT 1`,
    [workspaceId, campaignId, customerId],
  );
  return rows[0]?.id;
}

/**
 * Adds credits to a gift card by a relative update (the engine's own writes are relative and guarded too, so a
 * partition's cached balance can be stale without harm) and appends the CREDITS_ADDED entry; undefined past 2^53-1.
 */
export async function creditGiftCard(tx: Sql, workspaceId: string, cardId: string, amount: number): Promise<{ code: string; balance: number } | undefined> {
  const { rows } = await tx.query<{ code: string; balance: number }>(
    `WITH credited AS (
       UPDATE vouchers SET gift_balance = gift_balance + $3 WHERE workspace_id = $1 AND id = $2 AND gift_balance + $3 <= $4 RETURNING id, code, gift_balance
     ), entry AS (
       INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after) SELECT $1, id, 'CREDITS_ADDED', $3, gift_balance FROM credited
     )
     SELECT code, gift_balance AS balance FROM credited`,
    [workspaceId, cardId, amount, MAX_AMOUNT],
  );
  return rows[0];
}

/**
 * Takes gift credits back with an ADJUSTMENT entry: `whole` the amount or nothing, `up to the balance` as much as is
 * left. The credits taken, or undefined when `whole` finds the balance short.
 */
export async function debitGiftCard(tx: Sql, workspaceId: string, cardId: string, amount: number, mode: 'whole' | 'up to the balance'): Promise<number | undefined> {
  const { rows } = await tx.query<{ taken: number }>(
    `WITH taken AS (
       UPDATE vouchers v SET gift_balance = v.gift_balance - t.taken
         FROM (SELECT id, CASE WHEN $4 THEN $3::bigint ELSE least($3::bigint, gift_balance) END AS taken FROM vouchers
                WHERE workspace_id = $1 AND id = $2 FOR UPDATE) t
        WHERE v.id = t.id AND v.gift_balance >= t.taken
        RETURNING v.id, v.gift_balance, t.taken
     ), entry AS (
       INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after)
       SELECT $1, id, 'ADJUSTMENT', -taken, gift_balance FROM taken WHERE taken > 0
     )
     SELECT taken FROM taken`,
    [workspaceId, cardId, amount, mode === 'whole'],
  );
  return rows[0]?.taken;
}

/** Disables an issued voucher never redeemed; false when it was used. */
export async function disableUnusedVoucher(tx: Sql, workspaceId: string, voucherId: string): Promise<boolean> {
  const { rowCount } = await tx.query('UPDATE vouchers SET active = false WHERE workspace_id = $1 AND id = $2 AND redeemed_count = 0', [workspaceId, voucherId]);
  return rowCount === 1;
}

/** Adds the codes not in the pool yet; the reward becomes a pool reward whose stock is its AVAILABLE codes. */
export async function addRewardCodes(tx: Sql, workspaceId: string, rewardId: string, codes: string[]): Promise<{ added: number; stock: number }> {
  const { rows } = await tx.query<{ added: number; stock: number }>(
    `WITH added AS (
       INSERT INTO reward_codes (workspace_id, reward_id, code)
       SELECT $1, $2, c FROM (SELECT DISTINCT c FROM unnest($3::text[]) AS c) AS distinct_codes
       ON CONFLICT ON CONSTRAINT reward_codes_unique DO NOTHING
       RETURNING 1
     ), counted AS (
       SELECT (SELECT count(*) FROM added) AS added,
              (SELECT count(*) FROM reward_codes WHERE reward_id = $2 AND status = 'AVAILABLE') + (SELECT count(*) FROM added) AS stock
     )
     UPDATE rewards SET code_pool = true, stock = counted.stock, updated_at = now() FROM counted
      WHERE workspace_id = $1 AND id = $2
      RETURNING counted.added::int AS added, counted.stock::int AS stock`,
    [workspaceId, rewardId, codes],
  );
  return rows[0]!;
}

/** Hands the oldest AVAILABLE code to a redemption or grant; undefined when the pool is empty. */
export async function claimRewardCode(tx: Sql, rewardId: string, issuedFor: string): Promise<{ codeId: string; code: string } | undefined> {
  const { rows } = await tx.query<{ id: string; code: string }>(
    `UPDATE reward_codes SET status = 'ISSUED', issued_for = $2, issued_at = now()
      WHERE id = (SELECT id FROM reward_codes WHERE reward_id = $1 AND status = 'AVAILABLE' ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id, code`,
    [rewardId, issuedFor],
  );
  return rows[0] && { codeId: rows[0].id, code: rows[0].code };
}

/** A code taken back is void: it was shown to the member, so it never goes to anyone else. */
export async function voidRewardCode(tx: Sql, codeId: string): Promise<void> {
  await tx.query(`UPDATE reward_codes SET status = 'VOID' WHERE id = $1 AND status = 'ISSUED'`, [codeId]);
}
