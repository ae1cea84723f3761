-- Automatic promotion tiers, schedules and campaign budgets.
--
-- A promotion tier is stored as a voucher row of kind 'TIER' (its code is `tier:<id>`, never shown as a code): it is
-- decided, counted, guarded, rolled back and group-committed by the redemption engine exactly like a code, so tiers
-- share every guarantee of vouchers without a second write path. Voucher endpoints never see tier rows.
ALTER TABLE vouchers ADD COLUMN kind text NOT NULL DEFAULT 'CODE' CHECK (kind IN ('CODE', 'TIER'));
ALTER TABLE vouchers ADD COLUMN name text;
ALTER TABLE vouchers ADD COLUMN schedule jsonb;
CREATE INDEX vouchers_tiers ON vouchers (workspace_id, campaign_id) WHERE kind = 'TIER';
-- Vouchers assigned (or published) to a customer: what qualification offers them.
CREATE INDEX vouchers_by_customer ON vouchers (workspace_id, customer_id) WHERE customer_id IS NOT NULL;

ALTER TABLE campaigns ADD COLUMN schedule jsonb;
-- { total?, daily?, weekly?, monthly? }, each { redemptions?, discountAmount? }; periods in the workspace's time zone.
ALTER TABLE campaigns ADD COLUMN budget jsonb;
-- Publications: at most one code of the campaign per customer.
ALTER TABLE campaigns ADD COLUMN once_per_customer boolean NOT NULL DEFAULT false;

-- What a budgeted campaign has used per period ('total', 'day:2026-11-21', 'week:2026-11-16' (its Monday),
-- 'month:2026-11'). The engine's commit statement adds to these rows with a guard against the limit, so a budget holds
-- under races between partitions and processes: concurrent commits queue on the row and each sees the other's sum.
CREATE TABLE campaign_budget_usage (
  workspace_id uuid NOT NULL,
  campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  period text NOT NULL,
  redemptions integer NOT NULL DEFAULT 0 CHECK (redemptions >= 0),
  discount_amount bigint NOT NULL DEFAULT 0 CHECK (discount_amount >= 0),
  PRIMARY KEY (campaign_id, period)
);

-- A schedule or kind change is a settings change: the engine's stale-cache guard must see it.
DROP TRIGGER vouchers_config_version ON vouchers;
CREATE TRIGGER vouchers_config_version BEFORE UPDATE ON vouchers FOR EACH ROW
  WHEN (OLD.active IS DISTINCT FROM NEW.active OR OLD.discount IS DISTINCT FROM NEW.discount
    OR OLD.currency IS DISTINCT FROM NEW.currency OR OLD.start_date IS DISTINCT FROM NEW.start_date
    OR OLD.expiration_date IS DISTINCT FROM NEW.expiration_date OR OLD.redemption_limit IS DISTINCT FROM NEW.redemption_limit
    OR OLD.per_customer_limit IS DISTINCT FROM NEW.per_customer_limit OR OLD.priority IS DISTINCT FROM NEW.priority
    OR OLD.exclusive IS DISTINCT FROM NEW.exclusive OR OLD.max_discount IS DISTINCT FROM NEW.max_discount
    OR OLD.customer_id IS DISTINCT FROM NEW.customer_id OR OLD.validation_rule_ids IS DISTINCT FROM NEW.validation_rule_ids
    OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id OR OLD.schedule IS DISTINCT FROM NEW.schedule
    OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.name IS DISTINCT FROM NEW.name)
  EXECUTE FUNCTION bump_config_version();

-- Bumped whenever a tier, a validation rule or a workspace setting changes: the qualification index of a workspace is
-- rebuilt when its number moved (one indexed read per qualification instead of a scan of every tier).
ALTER TABLE workspaces ADD COLUMN promotions_version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION bump_promotions_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ws uuid;
BEGIN
  IF TG_OP = 'DELETE' THEN ws := OLD.workspace_id; ELSE ws := NEW.workspace_id; END IF;
  UPDATE workspaces SET promotions_version = promotions_version + 1 WHERE workspace_id = ws;
  RETURN NULL;
END $$;

-- Tier rows only, and not when only the counters move (the engine's commits must not touch the workspace row).
CREATE TRIGGER vouchers_tier_inserted AFTER INSERT ON vouchers FOR EACH ROW
  WHEN (NEW.kind = 'TIER') EXECUTE FUNCTION bump_promotions_version();
CREATE TRIGGER vouchers_tier_deleted AFTER DELETE ON vouchers FOR EACH ROW
  WHEN (OLD.kind = 'TIER') EXECUTE FUNCTION bump_promotions_version();
CREATE TRIGGER vouchers_tier_updated AFTER UPDATE ON vouchers FOR EACH ROW
  WHEN (NEW.kind = 'TIER' AND OLD.config_version IS DISTINCT FROM NEW.config_version) EXECUTE FUNCTION bump_promotions_version();
CREATE TRIGGER campaigns_promotions_changed AFTER INSERT OR UPDATE OR DELETE ON campaigns FOR EACH ROW
  EXECUTE FUNCTION bump_promotions_version();
