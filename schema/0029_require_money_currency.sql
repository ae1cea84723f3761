-- Vouchers whose amounts are money (an AMOUNT or FIXED discount, a PERCENT discount's amountLimit, a maxDiscount, gift
-- credits) now need a currency, their own or their campaign's; creating one without is refused (400 currency_required).
-- This migration settles the rows made before the rule, and records each decision in voucher_currency_backfills:
--   1. 'redemptions': the voucher was redeemed with orders in exactly one currency: it takes that currency.
--   2. 'workspace':   else, every voucher and campaign of its workspace that names a currency names the same one (the
--                     workspace's de facto currency; workspaces have no default-currency setting): it takes that one.
--   3. 'disabled':    else nothing says which currency its amounts meant: it is made inactive (active = false), its
--                     currency left empty, so that it no longer takes 500 off an order in any currency. Give it a
--                     currency (PATCH is refused until the voucher or its campaign has one) and enable it again.
-- Campaign templates: a money template of a campaign without a currency takes the workspace's one currency of step 2
-- ('campaign' rows), when there is one; a template left without one makes no voucher until the campaign gets one.
-- Promotion tiers (vouchers rows of kind 'TIER') are left alone: the rule is for vouchers with codes, and the tiers API
-- has no currency of its own to give a tier afterwards (a tier counts in its campaign's currency, else the order's).
-- The counts are raised as a NOTICE (the decisions themselves are in voucher_currency_backfills).

CREATE TABLE voucher_currency_backfills (
  workspace_id uuid NOT NULL,
  voucher_id uuid,
  campaign_id uuid,
  code text,
  action text NOT NULL CHECK (action IN ('redemptions', 'workspace', 'disabled', 'campaign')),
  currency text,
  decided_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX voucher_currency_backfills_by_workspace ON voucher_currency_backfills (workspace_id, decided_at);

CREATE TEMPORARY TABLE money_without_currency ON COMMIT DROP AS
SELECT v.workspace_id, v.id, v.code
FROM vouchers v LEFT JOIN campaigns c ON c.id = v.campaign_id
WHERE v.kind = 'CODE' AND v.currency IS NULL AND c.currency IS NULL
  AND (v.discount->>'type' IN ('AMOUNT', 'FIXED')
       OR (v.discount->>'type' = 'PERCENT' AND v.discount ? 'amountLimit')
       OR v.max_discount IS NOT NULL
       OR v.gift_amount IS NOT NULL);

-- The one currency of each workspace, where there is exactly one.
CREATE TEMPORARY TABLE workspace_currency ON COMMIT DROP AS
SELECT workspace_id, min(currency) AS currency
FROM (SELECT workspace_id, currency FROM vouchers WHERE currency IS NOT NULL
      UNION SELECT workspace_id, currency FROM campaigns WHERE currency IS NOT NULL) named
GROUP BY workspace_id
HAVING count(DISTINCT currency) = 1;

WITH decided AS (
  SELECT m.workspace_id, m.id, m.code,
    (SELECT min(r.currency) FROM redemptions r WHERE r.voucher_id = m.id AND r.currency IS NOT NULL
     HAVING count(DISTINCT r.currency) = 1) AS redeemed_in,
    w.currency AS workspace_in
  FROM money_without_currency m LEFT JOIN workspace_currency w ON w.workspace_id = m.workspace_id
), logged AS (
  INSERT INTO voucher_currency_backfills (workspace_id, voucher_id, code, action, currency)
  SELECT workspace_id, id, code,
    CASE WHEN redeemed_in IS NOT NULL THEN 'redemptions' WHEN workspace_in IS NOT NULL THEN 'workspace' ELSE 'disabled' END,
    COALESCE(redeemed_in, workspace_in)
  FROM decided
  RETURNING voucher_id, action, currency
)
UPDATE vouchers v
SET currency = l.currency, active = CASE WHEN l.action = 'disabled' THEN false ELSE v.active END, updated_at = now()
FROM logged l WHERE v.id = l.voucher_id;

-- Templates: a money template of a campaign without a currency takes its workspace's one currency, when there is one.
WITH templates AS (
  UPDATE campaigns c SET currency = w.currency, updated_at = now()
  FROM workspace_currency w
  WHERE w.workspace_id = c.workspace_id AND c.currency IS NULL AND c.voucher_template IS NOT NULL
    AND c.voucher_template->>'currency' IS NULL
    AND (c.voucher_template->'discount'->>'type' IN ('AMOUNT', 'FIXED')
         OR (c.voucher_template->'discount'->>'type' = 'PERCENT' AND c.voucher_template->'discount' ? 'amountLimit')
         OR c.voucher_template ? 'maxDiscount')
  RETURNING c.workspace_id, c.id, c.currency
)
INSERT INTO voucher_currency_backfills (workspace_id, campaign_id, action, currency)
SELECT workspace_id, id, 'campaign', currency FROM templates;

DO $$
DECLARE counts text;
BEGIN
  SELECT coalesce(string_agg(action || ': ' || n, ', '), 'nothing to do') INTO counts
  FROM (SELECT action, count(*) AS n FROM voucher_currency_backfills GROUP BY action ORDER BY action) a;
  RAISE NOTICE '0029_require_money_currency: %', counts;
END $$;
