// The engine's writes: one batch of decisions in one guarded statement (its own transaction). Every write carries its
// guard, so a stale cache or a second process can never over-redeem nor over-reserve: a guard that does not hold
// undoes the whole statement and names the stale part, never leaving half a batch.
import { preparedQuery, type Sql } from '../../platform/database.js';
import { uuidv7 } from '../../platform/ids.js';
import { MAX_AMOUNT } from '../../contract/checkout.schemas.js';
import { claimKeysStatement, type StoredKey } from '../../platform/idempotency-keys.sql.js';
import type { UsageKey } from './hot-path.sql.js';

export interface VoucherDelta {
  id: string;
  uses: number;
  balance: number;
  configVersion: number;
  campaignVersion: number | null;
}

export interface VoucherAfter {
  id: string;
  redeemedCount: number;
  giftBalance: number | null;
}

export interface UsageDelta extends UsageKey {
  workspaceId: string;
  delta: number;
}

export interface RedemptionRow {
  workspaceId: string;
  id: string;
  voucherId: string;
  voucherCode: string;
  campaignId: string | null;
  amount: number;
  kind: 'DISCOUNT' | 'GIFT' | 'POINTS';
  customerId: string | null;
  orderId: string | null;
  orderAmount: number | null;
  currency: string | null;
  stackId: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

export interface RollbackRow {
  workspaceId: string;
  id: string;
  redemptionId: string;
  voucherCode: string;
  amount: number;
  reason: string | null;
  createdAt: Date;
}


export interface LedgerRow {
  workspaceId: string;
  id: string;
  voucherId: string;
  type: 'CREDITS_ADDED' | 'REDEMPTION' | 'ROLLBACK' | 'ADJUSTMENT';
  amount: number;
  balanceAfter: number;
  redemptionId: string | null;
  createdAt: Date;
}


/**
 * Fills balanceAfter of a voucher's ledger rows (in order) from its balance after the whole transaction: the row is
 * locked by the update, so the last entry ends at that balance and each earlier one before the next one's change.
 */
export function settleBalances(entries: LedgerRow[], finalBalance: number): void {
  let after = finalBalance;
  for (let i = entries.length - 1; i >= 0; i--) {
    entries[i]!.balanceAfter = after;
    after -= entries[i]!.amount;
  }
}

/** Everything one batch writes, as the arrays of the commit statement. */
export interface BatchWrites {
  keys: readonly StoredKey[];
  rollbackIds: readonly string[];
  deltas: readonly VoucherDelta[];
  usage: readonly UsageDelta[];
  /** perCustomerLimit per voucher id whose uses grow. */
  usageLimits: ReadonlyArray<{ voucherId: string; limit: number }>;
  redemptions: readonly RedemptionRow[];
  rollbacks: readonly RollbackRow[];
  /** In the order of their changes per voucher; balance_after is computed from the voucher's balance after the batch. */
  ledger: readonly LedgerRow[];
  events: ReadonlyArray<{ workspaceId: string; type: string; payload: Record<string, unknown> }>;
  /** Net change per (campaign, period) of budgeted campaigns, with that period's limits (-1: none). */
  budgets: readonly BudgetDelta[];
  /** Validation sessions: the final state of each key a batch touched (a reservation, or none). */
  sessions: readonly SessionWrite[];
  /** Insight rollup sums (none when the rollup is off), added to the rows of `writer` (a partition's number). */
  rollups?: readonly RollupDelta[];
  writer?: number;
  /** Partition leases (slot, fencing token) the batch was decided under: all must still be current. */
  fences?: ReadonlyArray<readonly [number, number]>;
}

export interface SessionWrite {
  workspaceId: string;
  voucherId: string;
  key: string;
  amount: number;
  /** null: the reservation ends (consumed by a redemption, or released). */
  expiresAt: Date | null;
}

/** A batch's sums for one rollup row (workspace, campaign, currency, hour); the writer is the committing partition. */
export interface RollupDelta {
  workspaceId: string;
  campaignId: string | null;
  currency: string;
  hour: Date;
  redemptions: number;
  discountAmount: number;
  giftAmount: number;
  rollbacks: number;
  rolledBackDiscount: number;
  rolledBackGift: number;
}

export interface BudgetDelta {
  workspaceId: string;
  campaignId: string;
  period: string;
  uses: number;
  amount: number;
  maxUses: number;
  maxAmount: number;
}

export type GuardFailure = 'fence' | 'keys' | 'rollbacks' | 'vouchers' | 'usage' | 'budget';

/**
 * One batch in one statement, so one round trip and its own transaction: idempotency keys, rollbacks, the guarded
 * counter updates (rows locked in id order: engine writes never deadlock), per-customer uses, then the rows and the
 * outbox events (the same columns recordEvents() writes). Should any guard not hold, engine_guard() raises and the
 * whole statement is undone; the error names the part that was stale. Only the parts a batch needs are included
 * (a statement per combination, prepared once per connection): most batches are redemptions and events only.
 */
const PARTS = {
  // The leases the batch was decided under, locked FOR KEY SHARE until commit: a takeover (FOR UPDATE, token + 1) waits
  // for this statement, and a statement after it finds the new token, matches fewer rows, and is refused.
  fence: `fence AS MATERIALIZED (
  SELECT l.slot FROM partition_leases l JOIN unnest($73::int[], $74::bigint[]) AS f(slot, token) ON l.slot = f.slot AND l.token = f.token
     FOR KEY SHARE OF l
)`,
  // The idempotency facility's claim, batched: $1..$4 as claimKeysStatement declares them.
  keys: `keys AS (
  ${claimKeysStatement}
)`,
  rolled: `rolled AS (
  UPDATE redemptions SET status = 'ROLLED_BACK' WHERE id = ANY($5::uuid[]) AND status = 'SUCCEEDED' RETURNING id
)`,
  // Every voucher the batch changes (counters or sessions), locked in id order: engine writes never deadlock.
  locked: `locked AS MATERIALIZED (
  SELECT v.id FROM vouchers v WHERE v.id = ANY($56::uuid[]) ORDER BY v.id FOR UPDATE
)`,
  vouchers: `d AS (
  SELECT * FROM unnest($6::uuid[], $7::int[], $8::bigint[], $9::int[], $10::int[]) AS d(id, uses, balance, cv, campv)
), upd AS (
  UPDATE vouchers v
     SET redeemed_count = v.redeemed_count + d.uses,
         gift_balance = CASE WHEN d.balance = 0 THEN v.gift_balance ELSE v.gift_balance + d.balance END
    FROM d JOIN locked ON locked.id = d.id
   WHERE v.id = d.id
     AND v.config_version = d.cv
     AND (v.redemption_limit IS NULL OR v.redeemed_count + d.uses <= v.redemption_limit)
     AND (d.balance = 0 OR v.gift_balance + d.balance >= 0)
     AND (d.balance <= 0 OR v.gift_balance + d.balance <= ${MAX_AMOUNT})
     AND (v.campaign_id IS NULL OR d.campv = (SELECT c.version FROM campaigns c WHERE c.id = v.campaign_id))
  RETURNING v.id, v.redeemed_count, v.gift_balance
)`,
  usage: `usage_in AS (
  SELECT * FROM unnest($11::uuid[], $12::uuid[], $13::uuid[], $14::int[]) AS u(workspace_id, voucher_id, customer_id, delta)
), usage_up AS (
  INSERT INTO voucher_customer_uses AS u (workspace_id, voucher_id, customer_id, uses)
  SELECT workspace_id, voucher_id, customer_id, delta FROM usage_in WHERE delta > 0 ORDER BY voucher_id, customer_id
  ON CONFLICT (voucher_id, customer_id) DO UPDATE SET uses = u.uses + EXCLUDED.uses
  RETURNING u.voucher_id, u.customer_id, u.uses
), usage_down AS (
  UPDATE voucher_customer_uses u SET uses = greatest(0, u.uses + i.delta)
    FROM usage_in i
   WHERE i.delta < 0 AND u.voucher_id = i.voucher_id AND u.customer_id = i.customer_id
  RETURNING u.voucher_id, u.customer_id, u.uses
)`,
  redemptions: `red AS (
  INSERT INTO redemptions (workspace_id, id, voucher_id, voucher_code, campaign_id, amount, kind, customer_id, order_id,
                           order_amount, currency, stack_id, status, metadata, created_at)
  SELECT w, i, v, c, camp, a, k, cu, o, oa, cur, s, 'SUCCEEDED', m, t
    FROM unnest($15::uuid[], $16::uuid[], $17::uuid[], $18::text[], $19::uuid[], $20::bigint[], $21::text[], $22::uuid[],
                $23::text[], $24::bigint[], $25::text[], $26::uuid[], $27::jsonb[], $28::timestamptz[])
         AS r(w, i, v, c, camp, a, k, cu, o, oa, cur, s, m, t)
  RETURNING 1
)`,
  rollbacks: `rb AS (
  INSERT INTO redemption_rollbacks (workspace_id, id, redemption_id, voucher_code, amount, reason, created_at)
  SELECT * FROM unnest($29::uuid[], $30::uuid[], $31::uuid[], $32::text[], $33::bigint[], $34::text[], $35::timestamptz[])
)`,
  ledger: `ledger_in AS (
  SELECT * FROM unnest($36::uuid[], $37::uuid[], $38::uuid[], $39::text[], $40::bigint[], $41::uuid[], $42::timestamptz[])
         WITH ORDINALITY AS l(w, i, v, t, a, r, c, n)
), led AS (
  INSERT INTO gift_ledger_entries (workspace_id, id, voucher_id, type, amount, balance_after, redemption_id, created_at)
  SELECT l.w, l.i, l.v, l.t, l.a,
         upd.gift_balance - coalesce(sum(l.a) OVER (PARTITION BY l.v ORDER BY l.n DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0),
         l.r, l.c
    FROM ledger_in l JOIN upd ON upd.id = l.v
)`,
  budget: `budget_in AS (
  SELECT * FROM unnest($49::uuid[], $50::uuid[], $51::text[], $52::int[], $53::bigint[], $54::int[], $55::bigint[])
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
  // The voucher_sessions triggers check, after the statement, that live reservations stay within limit and balance.
  sessions: `sess_in AS (
  SELECT * FROM unnest($57::uuid[], $58::uuid[], $59::text[], $60::bigint[], $61::timestamptz[]) AS s(workspace_id, voucher_id, key, amount, expires_at)
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
  // Sums per batch, saturating at 2^53-1; rows of one writer in key order (a second process's same writer queues).
  rollup: `rollup_in AS (
  SELECT * FROM unnest($62::uuid[], $63::uuid[], $64::text[], $65::timestamptz[], $66::bigint[], $67::bigint[], $68::bigint[],
                       $69::bigint[], $70::bigint[], $71::bigint[])
         AS r(w, campaign, currency, hour, redemptions, discount, gift, rollbacks, rb_discount, rb_gift)
), rollup_up AS (
  INSERT INTO redemption_rollups AS u (workspace_id, campaign_id, currency, hour, writer, redemptions, discount_amount, gift_amount,
                                       rollbacks, rolled_back_discount, rolled_back_gift)
  SELECT w, campaign, currency, hour, $72::smallint, redemptions, discount, gift, rollbacks, rb_discount, rb_gift
    FROM rollup_in ORDER BY w, campaign, currency, hour
  ON CONFLICT ON CONSTRAINT redemption_rollups_key DO UPDATE
     SET redemptions = least(u.redemptions + EXCLUDED.redemptions, ${MAX_AMOUNT}),
         discount_amount = least(u.discount_amount + EXCLUDED.discount_amount, ${MAX_AMOUNT}),
         gift_amount = least(u.gift_amount + EXCLUDED.gift_amount, ${MAX_AMOUNT}),
         rollbacks = least(u.rollbacks + EXCLUDED.rollbacks, ${MAX_AMOUNT}),
         rolled_back_discount = least(u.rolled_back_discount + EXCLUDED.rolled_back_discount, ${MAX_AMOUNT}),
         rolled_back_gift = least(u.rolled_back_gift + EXCLUDED.rolled_back_gift, ${MAX_AMOUNT})
)`,
  events: `ev AS (
  INSERT INTO events (id, workspace_id, type, payload)
  SELECT * FROM unnest($48::uuid[], $43::uuid[], $44::text[], $45::jsonb[])
  RETURNING 1
)`,
} as const;

type Part = keyof typeof PARTS;

const GUARDS: Array<[Part, string]> = [
  ['fence', `(SELECT count(*) FROM fence) <> cardinality($73::int[]) THEN 'fence'`],
  ['keys', `(SELECT count(*) FROM keys) <> cardinality($1::uuid[]) THEN 'keys'`],
  // Not guards: read first, so that the redemption and event rows are inserted before the voucher rows are locked. A
  // batch waiting for another's voucher locks has then done most of its work, and holds the locks only briefly itself.
  ['redemptions', `(SELECT count(*) FROM red) < 0 THEN NULL`],
  ['events', `(SELECT count(*) FROM ev) < 0 THEN NULL`],
  ['rolled', `(SELECT count(*) FROM rolled) <> cardinality($5::uuid[]) THEN 'rollbacks'`],
  ['locked', `(SELECT count(*) FROM locked) <> cardinality($56::uuid[]) THEN 'vouchers'`],
  ['vouchers', `(SELECT count(*) FROM upd) <> cardinality($6::uuid[]) THEN 'vouchers'`],
  [
    'usage',
    `EXISTS (SELECT 1 FROM usage_up uu JOIN unnest($46::uuid[], $47::int[]) AS lim(voucher_id, lim)
                        ON lim.voucher_id = uu.voucher_id WHERE uu.uses > lim.lim) THEN 'usage'`,
  ],
  // Only a growing figure can break its limit (a limit lowered below what was used must not block rollbacks).
  [
    'budget',
    `EXISTS (SELECT 1 FROM (SELECT * FROM budget_up UNION ALL SELECT * FROM budget_down) bu
                JOIN budget_in bi ON bi.campaign = bu.campaign_id AND bi.period = bu.period
               WHERE (bi.uses > 0 AND bi.max_uses >= 0 AND bu.redemptions > bi.max_uses)
                  OR (bi.amount > 0 AND bi.max_amount >= 0 AND bu.discount_amount > bi.max_amount)) THEN 'budget'`,
  ],
];

/** The statement for a set of parts, with its parameters renumbered 1..n in order of first use. */
function commitStatement(parts: readonly Part[]): { text: string; params: number[] } {
  const guards = GUARDS.filter(([part]) => parts.includes(part)).map(([, sql]) => `WHEN ${sql}`);
  const vouchers = parts.includes('vouchers')
    ? `(SELECT coalesce(json_agg(json_build_array(id, redeemed_count, gift_balance)), '[]') FROM upd)`
    : `'[]'::json`;
  const usage = parts.includes('usage')
    ? `(SELECT coalesce(json_agg(json_build_array(voucher_id, customer_id, uses)), '[]')
          FROM (SELECT * FROM usage_up UNION ALL SELECT * FROM usage_down) u)`
    : `'[]'::json`;
  const original = `WITH ${parts.map((part) => PARTS[part]).join(', ')}
SELECT engine_guard(${guards.length ? `CASE ${guards.join(' ')} END` : 'NULL'}) AS ok, ${vouchers} AS vouchers, ${usage} AS usage`;
  const params: number[] = [];
  const text = original.replace(/\$(\d+)/g, (_m, n: string) => {
    let at = params.indexOf(Number(n));
    if (at === -1) at = params.push(Number(n)) - 1;
    return `$${at + 1}`;
  });
  return { text, params };
}

const statements = new Map<string, { name: string; text: string; params: number[] }>();

const PART_NAMES = Object.keys(PARTS) as Part[];

/** Prepared per combination of parts, named by a bit per part (PostgreSQL cuts names at 63 bytes). */
function statementFor(parts: Part[]) {
  const name = `engine.commit.${parts.reduce((mask, part) => mask | (1 << PART_NAMES.indexOf(part)), 0).toString(16)}`;
  let statement = statements.get(name);
  if (!statement) statements.set(name, (statement = { name, ...commitStatement(parts) }));
  return statement;
}

export type BatchResult =
  | { ok: true; vouchers: VoucherAfter[]; usage: Array<UsageKey & { uses: number }> }
  | { ok: false; failed: GuardFailure };

export async function commitBatch(db: Sql, w: BatchWrites): Promise<BatchResult> {
  const col = <T, K extends keyof T>(rows: readonly T[], k: K) => rows.map((r) => r[k]);
  const lockedIds = [...new Set([...w.deltas.map((d) => d.id), ...w.sessions.map((s) => s.voucherId)])];
  const rollups = w.rollups ?? [];
  const all: unknown[] = [
    undefined,
    col(w.keys, 'workspaceId'), col(w.keys, 'key'), col(w.keys, 'requestHash'), w.keys.map((k) => JSON.stringify(k.response)),
    w.rollbackIds,
    col(w.deltas, 'id'), col(w.deltas, 'uses'), col(w.deltas, 'balance'), col(w.deltas, 'configVersion'), w.deltas.map((d) => d.campaignVersion ?? -1),
    col(w.usage, 'workspaceId'), col(w.usage, 'voucherId'), col(w.usage, 'customerId'), col(w.usage, 'delta'),
    col(w.redemptions, 'workspaceId'), col(w.redemptions, 'id'), col(w.redemptions, 'voucherId'), col(w.redemptions, 'voucherCode'),
    col(w.redemptions, 'campaignId'), col(w.redemptions, 'amount'), col(w.redemptions, 'kind'), col(w.redemptions, 'customerId'),
    col(w.redemptions, 'orderId'), col(w.redemptions, 'orderAmount'), col(w.redemptions, 'currency'), col(w.redemptions, 'stackId'),
    w.redemptions.map((r) => JSON.stringify(r.metadata)), col(w.redemptions, 'createdAt'),
    col(w.rollbacks, 'workspaceId'), col(w.rollbacks, 'id'), col(w.rollbacks, 'redemptionId'), col(w.rollbacks, 'voucherCode'),
    col(w.rollbacks, 'amount'), col(w.rollbacks, 'reason'), col(w.rollbacks, 'createdAt'),
    col(w.ledger, 'workspaceId'), col(w.ledger, 'id'), col(w.ledger, 'voucherId'), col(w.ledger, 'type'), col(w.ledger, 'amount'),
    col(w.ledger, 'redemptionId'), col(w.ledger, 'createdAt'),
    col(w.events, 'workspaceId'), col(w.events, 'type'), w.events.map((e) => JSON.stringify(e.payload)),
    col(w.usageLimits, 'voucherId'), col(w.usageLimits, 'limit'),
    w.events.map(() => uuidv7()),
    col(w.budgets, 'workspaceId'), col(w.budgets, 'campaignId'), col(w.budgets, 'period'), col(w.budgets, 'uses'),
    col(w.budgets, 'amount'), col(w.budgets, 'maxUses'), col(w.budgets, 'maxAmount'),
    lockedIds,
    col(w.sessions, 'workspaceId'), col(w.sessions, 'voucherId'), col(w.sessions, 'key'), col(w.sessions, 'amount'), col(w.sessions, 'expiresAt'),
    col(rollups, 'workspaceId'), col(rollups, 'campaignId'), col(rollups, 'currency'), col(rollups, 'hour'),
    col(rollups, 'redemptions'), col(rollups, 'discountAmount'), col(rollups, 'giftAmount'), col(rollups, 'rollbacks'),
    col(rollups, 'rolledBackDiscount'), col(rollups, 'rolledBackGift'), w.writer ?? 0,
    (w.fences ?? []).map((f) => f[0]), (w.fences ?? []).map((f) => f[1]),
  ];
  const parts = (
    [
      ['fence', w.fences?.length ?? 0],
      ['keys', w.keys.length],
      ['rolled', w.rollbackIds.length],
      ['locked', lockedIds.length],
      ['vouchers', w.deltas.length],
      ['usage', w.usage.length],
      ['budget', w.budgets.length],
      ['sessions', w.sessions.length],
      ['redemptions', w.redemptions.length],
      ['rollbacks', w.rollbacks.length],
      ['ledger', w.ledger.length],
      ['events', w.events.length],
      ['rollup', rollups.length],
    ] as Array<[Part, number]>
  ).flatMap(([part, n]) => (n > 0 ? [part] : []));
  const statement = statementFor(parts);
  try {
    const { rows } = await preparedQuery<{ vouchers: Array<[string, number, number | null]>; usage: Array<[string, string, number]> }>(
      db,
      statement.name,
      statement.text,
      statement.params.map((n) => all[n]),
    );
    const row = rows[0]!;
    return {
      ok: true,
      vouchers: row.vouchers.map(([id, redeemedCount, giftBalance]) => ({ id, redeemedCount, giftBalance })),
      usage: row.usage.map(([voucherId, customerId, uses]) => ({ voucherId, customerId, uses })),
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    const failed = /^engine guard: (fence|keys|rollbacks|vouchers|usage|budget)$/.exec(message)?.[1] as GuardFailure | undefined;
    if ((error as { code?: string }).code === 'P0001' && failed) return { ok: false, failed };
    throw error;
  }
}
