-- Loyalty programs: a LOYALTY_PROGRAM campaign's settings, members (LOYALTY_CARD voucher rows carrying the points
-- caches), tiers, earning rules, the points ledger with its buckets and draws, and the inbox of outbox events the
-- worker reacts to. Every change of a card's points goes through the functions in 0018, which lock the card row first.

ALTER TABLE campaigns ADD COLUMN loyalty jsonb;

-- The caches of a card's ledger, kept in the transaction of each entry: balance = sum of amount, pending = sum of
-- pending_amount, lifetime = earned net of reversed. On the card's row so that any statement guarding a card (the
-- engine's included) reads and guards the balance where it locks the card.
ALTER TABLE vouchers
  ADD COLUMN points_balance bigint NOT NULL DEFAULT 0,
  ADD COLUMN points_pending bigint NOT NULL DEFAULT 0,
  ADD COLUMN points_lifetime bigint NOT NULL DEFAULT 0,
  ADD COLUMN loyalty_tier_id uuid;
ALTER TABLE vouchers ADD CONSTRAINT vouchers_points_within_safe_range CHECK (
  points_balance BETWEEN -9007199254740991 AND 9007199254740991
  AND points_pending BETWEEN 0 AND 9007199254740991
  AND points_lifetime BETWEEN -9007199254740991 AND 9007199254740991);

-- One card per customer and program: the last line of defence behind the 409 of members.create and autoJoin.
CREATE UNIQUE INDEX vouchers_loyalty_member ON vouchers (campaign_id, customer_id)
  WHERE type = 'LOYALTY_CARD' AND customer_id IS NOT NULL;
CREATE INDEX vouchers_loyalty_members_by_created ON vouchers (campaign_id, created_at DESC, id DESC) WHERE type = 'LOYALTY_CARD';

CREATE TABLE loyalty_tiers (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  program_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  name text NOT NULL,
  min_points bigint NOT NULL CHECK (min_points BETWEEN 0 AND 9007199254740991),
  -- Four decimals, applied in integer arithmetic (floor) to the points a rule earns.
  multiplier numeric(9, 4) NOT NULL DEFAULT 1 CHECK (multiplier > 0 AND multiplier <= 1000),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT loyalty_tiers_min_points_unique UNIQUE (program_id, min_points)
);
ALTER TABLE vouchers ADD CONSTRAINT vouchers_loyalty_tier_fk FOREIGN KEY (loyalty_tier_id) REFERENCES loyalty_tiers (id) ON DELETE SET NULL;

CREATE TABLE loyalty_earning_rules (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  program_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  name text NOT NULL,
  active boolean NOT NULL DEFAULT true,
  trigger text NOT NULL CHECK (trigger IN ('ORDER_PAID', 'SEGMENT_ENTERED', 'CUSTOM_EVENT')),
  segment_id uuid,
  event_name text,
  points jsonb NOT NULL,
  validation_rule_ids uuid[] NOT NULL DEFAULT '{}',
  limits jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX loyalty_earning_rules_by_program ON loyalty_earning_rules (workspace_id, program_id, created_at DESC, id DESC);
CREATE INDEX loyalty_earning_rules_by_trigger ON loyalty_earning_rules (workspace_id, trigger) WHERE active;

-- Every grant is a bucket. Spending draws from ACTIVE buckets, earliest expiry first (never-expiring last);
-- `expired` is what left the balance when the bucket expired.
CREATE TABLE loyalty_point_buckets (
  workspace_id uuid NOT NULL,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  member_id uuid NOT NULL REFERENCES vouchers (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('PENDING', 'ACTIVE', 'EXPIRED', 'CANCELED')),
  -- The grant that made it (POINTS_EARNED counts into lifetime when it becomes active).
  kind text NOT NULL,
  points bigint NOT NULL CHECK (points > 0 AND points <= 9007199254740991),
  remaining bigint NOT NULL CHECK (remaining >= 0 AND remaining <= points),
  expired bigint NOT NULL DEFAULT 0 CHECK (expired >= 0 AND expired <= points),
  activates_at timestamptz,
  expires_at timestamptz,
  expiring_notified_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX loyalty_point_buckets_fifo ON loyalty_point_buckets (member_id, expires_at, created_at, id)
  WHERE status = 'ACTIVE' AND remaining > 0;
CREATE INDEX loyalty_point_buckets_pending_due ON loyalty_point_buckets (activates_at) WHERE status = 'PENDING';
CREATE INDEX loyalty_point_buckets_expiry_due ON loyalty_point_buckets (expires_at) WHERE status = 'ACTIVE' AND expires_at IS NOT NULL;

-- The append-only points ledger of a card.
CREATE TABLE loyalty_ledger_entries (
  workspace_id uuid NOT NULL,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  member_id uuid NOT NULL REFERENCES vouchers (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('POINTS_EARNED', 'PENDING_ADDED', 'PENDING_ACTIVATED', 'PENDING_CANCELED',
    'EARNING_REVERSED', 'POINTS_EXPIRED', 'REWARD_REDEMPTION', 'REWARD_REFUND', 'REDEMPTION', 'ROLLBACK', 'ADJUSTMENT',
    'TRANSFER_OUT', 'TRANSFER_IN')),
  amount bigint NOT NULL DEFAULT 0 CHECK (amount BETWEEN -9007199254740991 AND 9007199254740991),
  pending_amount bigint NOT NULL DEFAULT 0 CHECK (pending_amount BETWEEN -9007199254740991 AND 9007199254740991),
  balance_after bigint NOT NULL,
  source_type text NOT NULL,
  source_id text,
  order_id text,
  earning_rule_id uuid,
  bucket_id uuid,
  -- A refund names the debit it gives back.
  related_entry_id uuid,
  expires_at timestamptz,
  activates_at timestamptz,
  reason text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX loyalty_ledger_entries_by_member ON loyalty_ledger_entries (workspace_id, member_id, created_at DESC, id DESC);

-- Which buckets a debit drew from, and how much of each was given back: a refund refills the same buckets.
CREATE TABLE loyalty_point_draws (
  workspace_id uuid NOT NULL,
  entry_id uuid NOT NULL REFERENCES loyalty_ledger_entries (id) ON DELETE CASCADE,
  bucket_id uuid NOT NULL REFERENCES loyalty_point_buckets (id) ON DELETE CASCADE,
  points bigint NOT NULL CHECK (points > 0),
  refunded bigint NOT NULL DEFAULT 0 CHECK (refunded >= 0 AND refunded <= points),
  PRIMARY KEY (entry_id, bucket_id)
);

-- What each earning rule gave for what: the unique key makes a replayed or retried reaction earn nothing twice.
-- reaction_key: 'order:<orderId>', 'segment:<segmentId>:<customerId>', 'custom:<customEventId>'.
CREATE TABLE loyalty_earnings (
  workspace_id uuid NOT NULL,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  earning_rule_id uuid NOT NULL,
  member_id uuid NOT NULL REFERENCES vouchers (id) ON DELETE CASCADE,
  reaction_key text NOT NULL,
  order_id uuid,
  bucket_id uuid NOT NULL REFERENCES loyalty_point_buckets (id) ON DELETE CASCADE,
  points bigint NOT NULL CHECK (points > 0),
  reversed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT loyalty_earnings_once UNIQUE (earning_rule_id, reaction_key)
);
CREATE INDEX loyalty_earnings_by_order ON loyalty_earnings (workspace_id, order_id) WHERE order_id IS NOT NULL;
CREATE INDEX loyalty_earnings_by_member_rule ON loyalty_earnings (member_id, earning_rule_id);

CREATE TABLE custom_events (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  customer_id uuid NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  referral_code text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX custom_events_by_created ON custom_events (workspace_id, created_at DESC, id DESC);

-- The outbox events loyalty reacts to, copied in the transaction that records them: the worker takes each row with
-- FOR UPDATE SKIP LOCKED and deletes it in the transaction of its reaction, so a reaction commits exactly with the
-- removal of its row (a killed worker's transaction rolls back and the row is taken again).
CREATE TABLE loyalty_event_inbox (
  workspace_id uuid NOT NULL,
  event_id uuid PRIMARY KEY,
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX loyalty_event_inbox_by_created ON loyalty_event_inbox (created_at);

CREATE FUNCTION loyalty_inbox_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO loyalty_event_inbox (workspace_id, event_id, type, payload, created_at)
  VALUES (NEW.workspace_id, NEW.id, NEW.type, NEW.payload, NEW.created_at) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

-- The WHEN clause keeps every other event (the hot path's voucher.redeemed) out of the function call.
CREATE TRIGGER events_loyalty_inbox AFTER INSERT ON events FOR EACH ROW
  WHEN (NEW.type IN ('order.paid', 'order.canceled', 'customer.segment.entered'))
  EXECUTE FUNCTION loyalty_inbox_event();
