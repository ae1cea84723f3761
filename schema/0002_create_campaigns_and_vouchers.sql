-- Campaigns (with their voucher template) and vouchers. Codes are unique per workspace, case-sensitive.
CREATE TABLE campaigns (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('DISCOUNT_COUPONS', 'GIFT_VOUCHERS', 'LOYALTY_PROGRAM', 'REFERRAL_PROGRAM', 'PROMOTION')),
  active boolean NOT NULL DEFAULT true,
  start_date timestamptz,
  expiration_date timestamptz,
  priority integer NOT NULL DEFAULT 0,
  exclusive boolean NOT NULL DEFAULT false,
  currency text,
  voucher_template jsonb,
  validation_rule_ids uuid[] NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaigns_by_created ON campaigns (workspace_id, created_at DESC, id DESC);

CREATE TABLE vouchers (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  code text NOT NULL,
  campaign_id uuid REFERENCES campaigns (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('DISCOUNT', 'GIFT_CARD', 'LOYALTY_CARD')),
  discount jsonb,
  currency text,
  active boolean NOT NULL DEFAULT true,
  start_date timestamptz,
  expiration_date timestamptz,
  redemption_limit integer CHECK (redemption_limit >= 0),
  redeemed_count integer NOT NULL DEFAULT 0 CHECK (redeemed_count >= 0),
  per_customer_limit integer CHECK (per_customer_limit >= 1),
  priority integer,
  exclusive boolean,
  max_discount bigint CHECK (max_discount >= 0),
  customer_id uuid,
  gift_amount bigint CHECK (gift_amount >= 0),
  gift_balance bigint CHECK (gift_balance >= 0),
  validation_rule_ids uuid[] NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT vouchers_code_unique UNIQUE (workspace_id, code),
  -- The last line of defence against over-redemption: no write may leave more uses than the limit.
  CONSTRAINT vouchers_within_limit CHECK (redemption_limit IS NULL OR redeemed_count <= redemption_limit)
);
CREATE INDEX vouchers_by_created ON vouchers (workspace_id, created_at DESC, id DESC);
CREATE INDEX vouchers_by_campaign ON vouchers (campaign_id, created_at DESC, id DESC);
