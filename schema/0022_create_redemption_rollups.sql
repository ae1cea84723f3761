-- Insights: exact redemption figures without reading redemptions, and refusals by explanation code.
--
-- redemption_rollups: what was redeemed and rolled back, per workspace, campaign, currency, hour and writer. The
-- engine's commit statement adds a batch's sums to these rows in the same statement that writes its redemptions and
-- rollbacks, so the figures are exact (they commit or roll back with the change). `writer` is the partition that
-- committed (-1: a process's stack committer), so within a process each row has one writer and batches never queue
-- on each other's rows; a second process with the same partition number adds to the same row under its row lock.
-- `hour` is the start of the hour in the workspace's time zone at the time of the commit (an hour in UTC for most
-- zones; 30 or 45 minutes off it in zones such as Asia/Kolkata), so days and hours in that zone add up exactly.
-- Figures are gross: a rollback counts in the hour it was made, its redemption stays in its own.
CREATE TABLE redemption_rollups (
  workspace_id uuid NOT NULL,
  -- NULL: vouchers without a campaign.
  campaign_id uuid,
  -- The order's currency, else the voucher's; '' when neither says.
  currency text NOT NULL,
  hour timestamptz NOT NULL,
  writer smallint NOT NULL,
  redemptions bigint NOT NULL DEFAULT 0 CHECK (redemptions BETWEEN 0 AND 9007199254740991),
  discount_amount bigint NOT NULL DEFAULT 0 CHECK (discount_amount BETWEEN 0 AND 9007199254740991),
  -- Gift credits used (gift card redemptions): not a discount.
  gift_amount bigint NOT NULL DEFAULT 0 CHECK (gift_amount BETWEEN 0 AND 9007199254740991),
  rollbacks bigint NOT NULL DEFAULT 0 CHECK (rollbacks BETWEEN 0 AND 9007199254740991),
  rolled_back_discount bigint NOT NULL DEFAULT 0 CHECK (rolled_back_discount BETWEEN 0 AND 9007199254740991),
  rolled_back_gift bigint NOT NULL DEFAULT 0 CHECK (rolled_back_gift BETWEEN 0 AND 9007199254740991),
  CONSTRAINT redemption_rollups_key UNIQUE NULLS NOT DISTINCT (workspace_id, campaign_id, currency, hour, writer)
) WITH (fillfactor = 70);
-- The counters are not indexed, so the engine's updates stay HOT (no index write per batch); fillfactor leaves room.
CREATE INDEX redemption_rollups_by_hour ON redemption_rollups (workspace_id, hour);

-- Refused redemptions, stacks and validations by explanation code. Counted in memory by each partition (and by each
-- process's stack coordinator, writer -1) and added here every few seconds and at a clean stop: a crash loses at most
-- the counts of the last interval. `hour` is the UTC hour.
CREATE TABLE refusal_counts (
  workspace_id uuid NOT NULL,
  -- NULL: no campaign (or no voucher: voucher_not_found).
  campaign_id uuid,
  code text NOT NULL,
  source text NOT NULL CHECK (source IN ('redemption', 'stack', 'validation')),
  hour timestamptz NOT NULL,
  writer smallint NOT NULL,
  count bigint NOT NULL DEFAULT 0 CHECK (count BETWEEN 0 AND 9007199254740991),
  CONSTRAINT refusal_counts_key UNIQUE NULLS NOT DISTINCT (workspace_id, campaign_id, code, source, hour, writer)
) WITH (fillfactor = 70);
CREATE INDEX refusal_counts_by_hour ON refusal_counts (workspace_id, hour);
