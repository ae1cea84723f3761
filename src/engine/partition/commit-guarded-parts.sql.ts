// The locks and guarded writes of the batch commit statement, each a named part (see commit-part.ts): leases, idempotency
// keys, rollbacks, voucher locks and counters, per-customer uses, campaign budgets and validation sessions.
import { claimKeysSql } from '../../platform/idempotency-keys.sql.js';
import { MAX_AMOUNT } from '../../contract/checkout.schemas.js';
import { columnOf, defineCommitPart } from './commit-part.js';
import { customerUsesSql } from './hot-path.sql.js';

// The leases the batch was decided under, locked FOR KEY SHARE until commit: a takeover (FOR UPDATE, token + 1) waits
// for this statement, and a statement after it finds the new token, matches fewer rows, and is refused.
export const fencePart = defineCommitPart({
  name: 'fence',
  params: { slots: 'int[]', tokens: 'bigint[]' },
  rows: (w) => w.fences?.length ?? 0,
  values: (w) => ({ slots: (w.fences ?? []).map((f) => f[0]), tokens: (w.fences ?? []).map((f) => f[1]) }),
  sql: (p) => ({
    cte: `fence AS MATERIALIZED (
  SELECT l.slot FROM partition_leases l JOIN unnest(${p.slots}, ${p.tokens}) AS f(slot, token) ON l.slot = f.slot AND l.token = f.token
     FOR KEY SHARE OF l
)`,
    guard: `(SELECT count(*) FROM fence) <> cardinality(${p.slots}) THEN 'fence'`,
  }),
});

export const keysPart = defineCommitPart({
  name: 'keys',
  params: { workspaceIds: 'uuid[]', keys: 'text[]', requestHashes: 'text[]', responses: 'json[]' },
  rows: (w) => w.keys.length,
  values: (w) => ({
    workspaceIds: columnOf(w.keys, 'workspaceId'),
    keys: columnOf(w.keys, 'key'),
    requestHashes: columnOf(w.keys, 'requestHash'),
    responses: w.keys.map((k) => JSON.stringify(k.response)),
  }),
  sql: (p) => ({
    // The idempotency facility's claim, batched.
    cte: `keys AS (
  ${claimKeysSql(p)}
)`,
    guard: `(SELECT count(*) FROM keys) <> cardinality(${p.workspaceIds}) THEN 'keys'`,
  }),
});

export const rolledPart = defineCommitPart({
  name: 'rolled',
  params: { redemptionIds: 'uuid[]', returnedCredits: 'bigint[]' },
  rows: (w) => w.rollbackIds.length,
  values: (w) => ({ redemptionIds: columnOf(w.rollbacks, 'redemptionId'), returnedCredits: columnOf(w.rollbacks, 'returnedCredit') }),
  sql: (p) => ({
    // A partial return of the order that gave gift credits back since the rollback was decided makes it stale too.
    cte: `rolled AS (
  UPDATE redemptions r SET status = 'ROLLED_BACK'
    FROM unnest(${p.redemptionIds}, ${p.returnedCredits}) AS x(id, credit)
   WHERE r.id = x.id AND r.status = 'SUCCEEDED' AND r.returned_credit = x.credit RETURNING r.id
)`,
    guard: `(SELECT count(*) FROM rolled) <> cardinality(${p.redemptionIds}) THEN 'rollbacks'`,
  }),
});

// Every voucher the batch changes (counters or sessions), locked in id order: engine writes never deadlock.
export const lockedPart = defineCommitPart({
  name: 'locked',
  params: { voucherIds: 'uuid[]' },
  rows: (w) => w.deltas.length + w.sessions.length,
  values: (w) => ({ voucherIds: [...new Set([...w.deltas.map((d) => d.id), ...w.sessions.map((s) => s.voucherId)])] }),
  sql: (p) => ({
    cte: `locked AS MATERIALIZED (
  SELECT v.id FROM vouchers v WHERE v.id = ANY(${p.voucherIds}) ORDER BY v.id FOR UPDATE
)`,
    guard: `(SELECT count(*) FROM locked) <> cardinality(${p.voucherIds}) THEN 'vouchers'`,
  }),
});

// A loyalty card's points debited by the batch come off its balance here, guarded like a gift card's credits; the
// points part (points-moves.sql.ts) writes their ledger entries and draws them from the card's buckets.
export const vouchersPart = defineCommitPart({
  name: 'vouchers',
  params: { ids: 'uuid[]', uses: 'int[]', balances: 'bigint[]', points: 'bigint[]', configVersions: 'int[]', campaignVersions: 'int[]' },
  rows: (w) => w.deltas.length,
  values: (w) => ({
    ids: columnOf(w.deltas, 'id'),
    uses: columnOf(w.deltas, 'uses'),
    balances: columnOf(w.deltas, 'balance'),
    points: columnOf(w.deltas, 'points'),
    configVersions: columnOf(w.deltas, 'configVersion'),
    campaignVersions: w.deltas.map((d) => d.campaignVersion ?? -1),
  }),
  sql: (p) => ({
    cte: `d AS (
  SELECT * FROM unnest(${p.ids}, ${p.uses}, ${p.balances}, ${p.points}, ${p.configVersions}, ${p.campaignVersions}) AS d(id, uses, balance, points, cv, campv)
), upd AS (
  UPDATE vouchers v
     SET redeemed_count = v.redeemed_count + d.uses,
         gift_balance = CASE WHEN d.balance = 0 THEN v.gift_balance ELSE v.gift_balance + d.balance END,
         points_balance = v.points_balance - d.points
    FROM d JOIN locked ON locked.id = d.id
   WHERE v.id = d.id
     AND v.config_version = d.cv
     AND (v.redemption_limit IS NULL OR v.redeemed_count + d.uses <= v.redemption_limit)
     AND (d.balance = 0 OR v.gift_balance + d.balance >= 0)
     AND (d.balance <= 0 OR v.gift_balance + d.balance <= ${MAX_AMOUNT})
     AND (d.points = 0 OR v.points_balance >= d.points)
     AND (v.campaign_id IS NULL OR d.campv = (SELECT c.version FROM campaigns c WHERE c.id = v.campaign_id))
  RETURNING v.id, v.redeemed_count, v.gift_balance, v.points_balance
)`,
    guard: `(SELECT count(*) FROM upd) <> cardinality(${p.ids}) THEN 'vouchers'`,
  }),
});

export const usagePart = defineCommitPart({
  name: 'usage',
  params: {
    workspaceIds: 'uuid[]', voucherIds: 'uuid[]', customerIds: 'uuid[]', deltas: 'int[]',
    // perCustomerLimit of each voucher whose uses grow, read by the guard only.
    limitVoucherIds: 'uuid[]', limits: 'int[]',
  },
  rows: (w) => w.usage.length,
  values: (w) => ({
    workspaceIds: columnOf(w.usage, 'workspaceId'),
    voucherIds: columnOf(w.usage, 'voucherId'),
    customerIds: columnOf(w.usage, 'customerId'),
    deltas: columnOf(w.usage, 'delta'),
    limitVoucherIds: columnOf(w.usageLimits, 'voucherId'),
    limits: columnOf(w.usageLimits, 'limit'),
  }),
  sql: (p) => ({
    // A pair's uses after the batch: its redemptions not rolled back before this statement (the statement does not
    // see its own rows and rollbacks) and the batch's net change.
    cte: `usage_in AS (
  SELECT * FROM unnest(${p.workspaceIds}, ${p.voucherIds}, ${p.customerIds}, ${p.deltas}) AS u(workspace_id, voucher_id, customer_id, delta)
), usage_after AS (
  SELECT i.voucher_id, i.customer_id, i.delta,
         greatest(0, i.delta + ${customerUsesSql('i.workspace_id', 'i.voucher_id', 'i.customer_id')})::int AS uses
    FROM usage_in i
)`,
    guard: `EXISTS (SELECT 1 FROM usage_after ua JOIN unnest(${p.limitVoucherIds}, ${p.limits}) AS lim(voucher_id, lim)
                        ON lim.voucher_id = ua.voucher_id WHERE ua.delta > 0 AND ua.uses > lim.lim) THEN 'usage'`,
  }),
});

export const budgetPart = defineCommitPart({
  name: 'budget',
  params: {
    workspaceIds: 'uuid[]', campaignIds: 'uuid[]', periods: 'text[]', uses: 'int[]', amounts: 'bigint[]',
    maxUses: 'int[]', maxAmounts: 'bigint[]',
  },
  rows: (w) => w.budgets.length,
  values: (w) => ({
    workspaceIds: columnOf(w.budgets, 'workspaceId'),
    campaignIds: columnOf(w.budgets, 'campaignId'),
    periods: columnOf(w.budgets, 'period'),
    uses: columnOf(w.budgets, 'uses'),
    amounts: columnOf(w.budgets, 'amount'),
    maxUses: columnOf(w.budgets, 'maxUses'),
    maxAmounts: columnOf(w.budgets, 'maxAmount'),
  }),
  sql: (p) => ({
    cte: `budget_in AS (
  SELECT * FROM unnest(${p.workspaceIds}, ${p.campaignIds}, ${p.periods}, ${p.uses}, ${p.amounts}, ${p.maxUses}, ${p.maxAmounts})
         AS b(w, campaign, period, uses, amount, max_uses, max_amount)
), budget_up AS (
  INSERT INTO campaign_budget_usage AS u (workspace_id, campaign_id, period, redemptions, discount_amount)
  SELECT w, campaign, period, uses, amount FROM budget_in WHERE uses >= 0 AND amount >= 0 ORDER BY campaign, period
  ON CONFLICT (campaign_id, period) DO UPDATE
     SET redemptions = u.redemptions + EXCLUDED.redemptions, discount_amount = u.discount_amount + EXCLUDED.discount_amount
  RETURNING u.campaign_id, u.period, u.redemptions, u.discount_amount
), budget_down AS (
  UPDATE campaign_budget_usage u
     SET redemptions = greatest(0, u.redemptions + b.uses), discount_amount = greatest(0, u.discount_amount + b.amount)
    FROM budget_in b
   WHERE (b.uses < 0 OR b.amount < 0) AND u.campaign_id = b.campaign AND u.period = b.period
  RETURNING u.campaign_id, u.period, u.redemptions, u.discount_amount
)`,
    // Only a growing figure can break its limit (a limit lowered below what was used must not block rollbacks).
    guard: `EXISTS (SELECT 1 FROM (SELECT * FROM budget_up UNION ALL SELECT * FROM budget_down) bu
                JOIN budget_in bi ON bi.campaign = bu.campaign_id AND bi.period = bu.period
               WHERE (bi.uses > 0 AND bi.max_uses >= 0 AND bu.redemptions > bi.max_uses)
                  OR (bi.amount > 0 AND bi.max_amount >= 0 AND bu.discount_amount > bi.max_amount)) THEN 'budget'`,
  }),
});

// The voucher_sessions triggers check, after the statement, that live reservations stay within limit and balance.
export const sessionsPart = defineCommitPart({
  name: 'sessions',
  params: { workspaceIds: 'uuid[]', voucherIds: 'uuid[]', keys: 'text[]', amounts: 'bigint[]', expiresAt: 'timestamptz[]' },
  rows: (w) => w.sessions.length,
  values: (w) => ({
    workspaceIds: columnOf(w.sessions, 'workspaceId'),
    voucherIds: columnOf(w.sessions, 'voucherId'),
    keys: columnOf(w.sessions, 'key'),
    amounts: columnOf(w.sessions, 'amount'),
    expiresAt: columnOf(w.sessions, 'expiresAt'),
  }),
  sql: (p) => ({
    cte: `sess_in AS (
  SELECT * FROM unnest(${p.workspaceIds}, ${p.voucherIds}, ${p.keys}, ${p.amounts}, ${p.expiresAt}) AS s(workspace_id, voucher_id, key, amount, expires_at)
), sess_set AS (
  INSERT INTO voucher_sessions AS s (workspace_id, voucher_id, key, amount, expires_at)
  SELECT i.workspace_id, i.voucher_id, i.key, i.amount, i.expires_at
    FROM sess_in i JOIN locked ON locked.id = i.voucher_id
   WHERE i.expires_at IS NOT NULL ORDER BY i.voucher_id, i.key
  ON CONFLICT (voucher_id, key) DO UPDATE SET amount = EXCLUDED.amount, expires_at = EXCLUDED.expires_at
  RETURNING 1
), sess_gone AS (
  DELETE FROM voucher_sessions s
   WHERE s.voucher_id IN (SELECT l.id FROM locked l JOIN sess_in i ON i.voucher_id = l.id)
     AND ((s.voucher_id, s.key) IN (SELECT voucher_id, key FROM sess_in WHERE expires_at IS NULL)
          OR (s.expires_at <= now() AND (s.voucher_id, s.key) NOT IN (SELECT voucher_id, key FROM sess_in)))
  RETURNING 1
)`,
  }),
});
