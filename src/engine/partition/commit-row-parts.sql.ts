// The rows the batch commit statement appends, each a named part (see commit-part.ts): redemptions, rollbacks, gift
// ledger entries, outbox events (the same columns recordEvents() writes) and the insight rollup's sums.
import { uuidv7 } from '../../platform/ids.js';
import { MAX_AMOUNT } from '../../contract/checkout.schemas.js';
import { columnOf, defineCommitPart } from './commit-part.js';

export const redemptionsPart = defineCommitPart({
  name: 'redemptions',
  params: {
    workspaceIds: 'uuid[]', ids: 'uuid[]', voucherIds: 'uuid[]', voucherCodes: 'text[]', campaignIds: 'uuid[]',
    amounts: 'bigint[]', kinds: 'text[]', customerIds: 'uuid[]', orderIds: 'text[]', orderAmounts: 'bigint[]',
    currencies: 'text[]', stackIds: 'uuid[]', metadata: 'jsonb[]', createdAt: 'timestamptz[]', itemDiscounts: 'jsonb[]',
    points: 'bigint[]', pointsEntryIds: 'uuid[]',
  },
  rows: (w) => w.redemptions.length,
  values: ({ redemptions: r }) => ({
    workspaceIds: columnOf(r, 'workspaceId'), ids: columnOf(r, 'id'), voucherIds: columnOf(r, 'voucherId'),
    voucherCodes: columnOf(r, 'voucherCode'), campaignIds: columnOf(r, 'campaignId'), amounts: columnOf(r, 'amount'),
    kinds: columnOf(r, 'kind'), customerIds: columnOf(r, 'customerId'), orderIds: columnOf(r, 'orderId'),
    orderAmounts: columnOf(r, 'orderAmount'), currencies: columnOf(r, 'currency'), stackIds: columnOf(r, 'stackId'),
    metadata: r.map((row) => JSON.stringify(row.metadata)), createdAt: columnOf(r, 'createdAt'),
    itemDiscounts: r.map((row) => (row.itemDiscounts ? JSON.stringify(row.itemDiscounts) : null)),
    points: columnOf(r, 'points'), pointsEntryIds: columnOf(r, 'pointsEntryId'),
  }),
  sql: (p) => ({
    cte: `red AS (
  INSERT INTO redemptions (workspace_id, id, voucher_id, voucher_code, campaign_id, amount, kind, customer_id, order_id,
                           order_amount, currency, stack_id, status, metadata, created_at, item_discounts, points, points_entry_id)
  SELECT w, i, v, c, camp, a, k, cu, o, oa, cur, s, 'SUCCEEDED', m, t, d, pts, pe
    FROM unnest(${p.workspaceIds}, ${p.ids}, ${p.voucherIds}, ${p.voucherCodes}, ${p.campaignIds}, ${p.amounts}, ${p.kinds}, ${p.customerIds},
                ${p.orderIds}, ${p.orderAmounts}, ${p.currencies}, ${p.stackIds}, ${p.metadata}, ${p.createdAt}, ${p.itemDiscounts}, ${p.points},
                ${p.pointsEntryIds})
         AS r(w, i, v, c, camp, a, k, cu, o, oa, cur, s, m, t, d, pts, pe)
  RETURNING 1
)`,
    // Not a guard: see the guard order in batch-commit.sql.ts.
    guard: `(SELECT count(*) FROM red) < 0 THEN NULL`,
  }),
});

export const rollbacksPart = defineCommitPart({
  name: 'rollbacks',
  params: {
    workspaceIds: 'uuid[]', ids: 'uuid[]', redemptionIds: 'uuid[]', voucherCodes: 'text[]', amounts: 'bigint[]',
    reasons: 'text[]', createdAt: 'timestamptz[]',
  },
  rows: (w) => w.rollbacks.length,
  values: ({ rollbacks: r }) => ({
    workspaceIds: columnOf(r, 'workspaceId'), ids: columnOf(r, 'id'), redemptionIds: columnOf(r, 'redemptionId'),
    voucherCodes: columnOf(r, 'voucherCode'), amounts: columnOf(r, 'amount'), reasons: columnOf(r, 'reason'),
    createdAt: columnOf(r, 'createdAt'),
  }),
  sql: (p) => ({
    cte: `rb AS (
  INSERT INTO redemption_rollbacks (workspace_id, id, redemption_id, voucher_code, amount, reason, created_at)
  SELECT * FROM unnest(${p.workspaceIds}, ${p.ids}, ${p.redemptionIds}, ${p.voucherCodes}, ${p.amounts}, ${p.reasons}, ${p.createdAt})
)`,
  }),
});

// balance_after from the voucher's balance after the batch (upd), less the later entries of the same voucher.
export const ledgerPart = defineCommitPart({
  name: 'ledger',
  params: {
    workspaceIds: 'uuid[]', ids: 'uuid[]', voucherIds: 'uuid[]', types: 'text[]', amounts: 'bigint[]',
    redemptionIds: 'uuid[]', createdAt: 'timestamptz[]',
  },
  rows: (w) => w.ledger.length,
  values: ({ ledger: l }) => ({
    workspaceIds: columnOf(l, 'workspaceId'), ids: columnOf(l, 'id'), voucherIds: columnOf(l, 'voucherId'),
    types: columnOf(l, 'type'), amounts: columnOf(l, 'amount'), redemptionIds: columnOf(l, 'redemptionId'),
    createdAt: columnOf(l, 'createdAt'),
  }),
  sql: (p) => ({
    cte: `ledger_in AS (
  SELECT * FROM unnest(${p.workspaceIds}, ${p.ids}, ${p.voucherIds}, ${p.types}, ${p.amounts}, ${p.redemptionIds}, ${p.createdAt})
         WITH ORDINALITY AS l(w, i, v, t, a, r, c, n)
), led AS (
  INSERT INTO gift_ledger_entries (workspace_id, id, voucher_id, type, amount, balance_after, redemption_id, created_at)
  SELECT l.w, l.i, l.v, l.t, l.a,
         upd.gift_balance - coalesce(sum(l.a) OVER (PARTITION BY l.v ORDER BY l.n DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0),
         l.r, l.c
    FROM ledger_in l JOIN upd ON upd.id = l.v
)`,
  }),
});

export const eventsPart = defineCommitPart({
  name: 'events',
  params: { ids: 'uuid[]', workspaceIds: 'uuid[]', types: 'text[]', payloads: 'jsonb[]' },
  rows: (w) => w.events.length,
  values: ({ events: e }) => ({
    ids: e.map(() => uuidv7()),
    workspaceIds: columnOf(e, 'workspaceId'),
    types: columnOf(e, 'type'),
    payloads: e.map((event) => JSON.stringify(event.payload)),
  }),
  sql: (p) => ({
    cte: `ev AS (
  INSERT INTO events (id, workspace_id, type, payload)
  SELECT * FROM unnest(${p.ids}, ${p.workspaceIds}, ${p.types}, ${p.payloads})
  RETURNING 1
)`,
    // Not a guard: see the guard order in batch-commit.sql.ts.
    guard: `(SELECT count(*) FROM ev) < 0 THEN NULL`,
  }),
});

// Sums per batch, saturating at 2^53-1; rows of one writer in key order (a second process's same writer queues).
export const rollupPart = defineCommitPart({
  name: 'rollup',
  params: {
    workspaceIds: 'uuid[]', campaignIds: 'uuid[]', currencies: 'text[]', hours: 'timestamptz[]', redemptions: 'bigint[]',
    discounts: 'bigint[]', gifts: 'bigint[]', rollbacks: 'bigint[]', rolledBackDiscounts: 'bigint[]',
    rolledBackGifts: 'bigint[]', writer: 'smallint',
  },
  rows: (w) => w.rollups?.length ?? 0,
  values: ({ rollups: r = [], writer }) => ({
    workspaceIds: columnOf(r, 'workspaceId'), campaignIds: columnOf(r, 'campaignId'), currencies: columnOf(r, 'currency'),
    hours: columnOf(r, 'hour'), redemptions: columnOf(r, 'redemptions'), discounts: columnOf(r, 'discountAmount'),
    gifts: columnOf(r, 'giftAmount'), rollbacks: columnOf(r, 'rollbacks'), rolledBackDiscounts: columnOf(r, 'rolledBackDiscount'),
    rolledBackGifts: columnOf(r, 'rolledBackGift'), writer: writer ?? 0,
  }),
  sql: (p) => ({
    cte: `rollup_in AS (
  SELECT * FROM unnest(${p.workspaceIds}, ${p.campaignIds}, ${p.currencies}, ${p.hours}, ${p.redemptions}, ${p.discounts}, ${p.gifts},
                       ${p.rollbacks}, ${p.rolledBackDiscounts}, ${p.rolledBackGifts})
         AS r(w, campaign, currency, hour, redemptions, discount, gift, rollbacks, rb_discount, rb_gift)
), rollup_up AS (
  INSERT INTO redemption_rollups AS u (workspace_id, campaign_id, currency, hour, writer, redemptions, discount_amount, gift_amount,
                                       rollbacks, rolled_back_discount, rolled_back_gift)
  SELECT w, campaign, currency, hour, ${p.writer}, redemptions, discount, gift, rollbacks, rb_discount, rb_gift
    FROM rollup_in ORDER BY w, campaign, currency, hour
  ON CONFLICT ON CONSTRAINT redemption_rollups_key DO UPDATE
     SET redemptions = least(u.redemptions + EXCLUDED.redemptions, ${MAX_AMOUNT}),
         discount_amount = least(u.discount_amount + EXCLUDED.discount_amount, ${MAX_AMOUNT}),
         gift_amount = least(u.gift_amount + EXCLUDED.gift_amount, ${MAX_AMOUNT}),
         rollbacks = least(u.rollbacks + EXCLUDED.rollbacks, ${MAX_AMOUNT}),
         rolled_back_discount = least(u.rolled_back_discount + EXCLUDED.rolled_back_discount, ${MAX_AMOUNT}),
         rolled_back_gift = least(u.rolled_back_gift + EXCLUDED.rolled_back_gift, ${MAX_AMOUNT})
)`,
  }),
});
