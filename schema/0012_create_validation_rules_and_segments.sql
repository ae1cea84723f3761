-- Reusable validation rules (a condition tree checked when a voucher is used) and customer segments (STATIC lists or
-- AUTO condition trees over customer fields, whose membership is kept current on every customer write).
CREATE TABLE validation_rules (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  conditions jsonb NOT NULL,
  error_message text,
  applicable_to jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX validation_rules_by_created ON validation_rules (workspace_id, created_at DESC, id DESC);
-- Campaigns and vouchers name their rules in uuid[] columns: these find the users of a rule before it is deleted.
CREATE INDEX campaigns_by_validation_rule ON campaigns USING gin (validation_rule_ids);
CREATE INDEX vouchers_by_validation_rule ON vouchers USING gin (validation_rule_ids);

-- The engine's qualification index reads rules: any change to one moves the workspace's promotions_version.
CREATE TRIGGER validation_rules_changed AFTER INSERT OR UPDATE OR DELETE ON validation_rules FOR EACH ROW
  EXECUTE FUNCTION bump_promotions_version();

CREATE TABLE segments (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('STATIC', 'AUTO')),
  conditions jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT segments_conditions_by_type CHECK ((type = 'AUTO') = (conditions IS NOT NULL))
);
CREATE INDEX segments_by_created ON segments (workspace_id, created_at DESC, id DESC);
CREATE INDEX segments_auto ON segments (workspace_id) WHERE type = 'AUTO';

CREATE TABLE segment_members (
  workspace_id uuid NOT NULL,
  segment_id uuid NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
  customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (segment_id, customer_id)
);
CREATE INDEX segment_members_by_customer ON segment_members (customer_id);
-- Members newest first (keyset on created_at, customer_id within a segment).
CREATE INDEX segment_members_by_created ON segment_members (segment_id, created_at DESC, customer_id DESC);
