-- The rewards catalog: rewards (what a member can get), custom reward types (the attributes and fulfillment of CUSTOM
-- rewards), the rewards a loyalty program offers at a price in points, and reward redemptions (the points debited,
-- the stock taken and what was issued, committed together), with per-tier prices and pools of codes to hand out.
CREATE TABLE reward_types (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  key text NOT NULL,
  name text NOT NULL,
  attributes_schema jsonb NOT NULL,
  fulfillment text NOT NULL CHECK (fulfillment IN ('NONE', 'MANUAL', 'WEBHOOK')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT reward_types_key_unique UNIQUE (workspace_id, key)
);
CREATE INDEX reward_types_by_created ON reward_types (workspace_id, created_at DESC, id DESC);

CREATE TABLE rewards (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('DISCOUNT_VOUCHER', 'GIFT_CREDITS', 'LOYALTY_POINTS', 'MATERIAL', 'CUSTOM')),
  campaign_id uuid,
  amount bigint CHECK (amount > 0 AND amount <= 9007199254740991),
  reward_type_id uuid REFERENCES reward_types (id),
  attributes jsonb NOT NULL DEFAULT '{}',
  -- Units left; null: unlimited. Never below 0 (the redemption's guarded decrement).
  stock bigint CHECK (stock >= 0 AND stock <= 9007199254740991),
  redeemed bigint NOT NULL DEFAULT 0 CHECK (redeemed >= 0),
  limit_per_member integer CHECK (limit_per_member > 0),
  -- With a pool, the stock is the count of its AVAILABLE codes (kept with every change of the pool).
  code_pool boolean NOT NULL DEFAULT false CHECK (NOT code_pool OR stock IS NOT NULL),
  active boolean NOT NULL DEFAULT true,
  start_date timestamptz,
  expiration_date timestamptz,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rewards_by_created ON rewards (workspace_id, created_at DESC, id DESC);

-- A reward offered in a program at a price in points (one price per program and reward).
CREATE TABLE loyalty_program_rewards (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  program_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  reward_id uuid NOT NULL REFERENCES rewards (id) ON DELETE CASCADE,
  points bigint NOT NULL CHECK (points > 0 AND points <= 9007199254740991),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT loyalty_program_rewards_unique UNIQUE (program_id, reward_id)
);
CREATE INDEX loyalty_program_rewards_by_program ON loyalty_program_rewards (workspace_id, program_id, created_at DESC, id DESC);

-- The price of an offer for the members of one tier of the program (else the offer's points).
CREATE TABLE loyalty_program_reward_prices (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  offer_id uuid NOT NULL REFERENCES loyalty_program_rewards (id) ON DELETE CASCADE,
  tier_id uuid NOT NULL REFERENCES loyalty_tiers (id) ON DELETE CASCADE,
  points bigint NOT NULL CHECK (points > 0 AND points <= 9007199254740991),
  PRIMARY KEY (offer_id, tier_id)
);

-- A reward's pool of codes (a partner's codes, tickets): each redemption takes one AVAILABLE code; a refunded one is
-- VOID (the member has seen it), never handed out again.
CREATE TABLE reward_codes (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  reward_id uuid NOT NULL REFERENCES rewards (id) ON DELETE CASCADE,
  code text NOT NULL CHECK (length(code) BETWEEN 1 AND 200),
  status text NOT NULL DEFAULT 'AVAILABLE' CHECK (status IN ('AVAILABLE', 'ISSUED', 'VOID')),
  -- The reward redemption (or referral grant) it went to.
  issued_for uuid,
  issued_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT reward_codes_unique UNIQUE (reward_id, code),
  CHECK ((status = 'AVAILABLE') = (issued_for IS NULL))
);
CREATE INDEX reward_codes_available ON reward_codes (reward_id, created_at, id) WHERE status = 'AVAILABLE';

CREATE TABLE reward_redemptions (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY,
  member_id uuid NOT NULL REFERENCES vouchers (id) ON DELETE CASCADE,
  customer_id uuid NOT NULL,
  reward_id uuid NOT NULL REFERENCES rewards (id),
  program_id uuid NOT NULL,
  points bigint NOT NULL CHECK (points > 0 AND points <= 9007199254740991),
  -- The ledger entry of the debit: a refund gives the points back into the buckets it drew from.
  debit_entry_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('COMPLETED', 'PENDING_FULFILLMENT', 'FULFILLED', 'CANCELED', 'REFUNDED')),
  -- What was issued: { voucherId, voucherCode } | { voucherId, voucherCode, amount } | { memberId, points }.
  issued jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reward_redemptions_by_member ON reward_redemptions (workspace_id, member_id, reward_id);
