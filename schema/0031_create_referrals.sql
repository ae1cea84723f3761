-- Referral programs: REFERRAL_PROGRAM campaigns with `referral` settings; one code per referrer (a voucher of the
-- program made from its template, with the referrer in referrer_customer_id: the code is not assigned to anyone, a
-- referee redeems it); conversions, one per referee and program while not reverted, written by the engine in the
-- transaction of the redemption that converts; and the rewards each side gets on confirmation (outcomes).
ALTER TABLE campaigns ADD COLUMN referral jsonb;

ALTER TABLE vouchers ADD COLUMN referrer_customer_id uuid;
-- One code per referrer and program: asking again finds it.
CREATE UNIQUE INDEX vouchers_referral_code_per_referrer ON vouchers (workspace_id, campaign_id, referrer_customer_id)
  WHERE referrer_customer_id IS NOT NULL;

CREATE TABLE referral_conversions (
  workspace_id uuid NOT NULL,
  id uuid PRIMARY KEY,
  program_id uuid NOT NULL,
  voucher_id uuid NOT NULL,
  code text NOT NULL,
  referrer_customer_id uuid NOT NULL,
  referee_customer_id uuid NOT NULL,
  order_id text,
  redemption_id uuid,
  status text NOT NULL CHECK (status IN ('PENDING', 'CONFIRMED', 'REVERTED')),
  -- Why it was reverted: the redemption rolled back (final) or the order canceled (a paid order confirms it again).
  reverted_by text CHECK (reverted_by IN ('ROLLBACK', 'ORDER_CANCELED')),
  confirmed_at timestamptz,
  reverted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- One live conversion per referee and program: the engine's insert is guarded by it (two codes of one program
-- redeemed at once by one referee, in two partitions or processes: the second batch finds it and decides again).
CREATE UNIQUE INDEX referral_conversions_one_per_referee ON referral_conversions (workspace_id, program_id, referee_customer_id)
  WHERE status <> 'REVERTED';
CREATE INDEX referral_conversions_by_program ON referral_conversions (workspace_id, program_id, created_at DESC, id DESC);
CREATE INDEX referral_conversions_by_redemption ON referral_conversions (redemption_id) WHERE redemption_id IS NOT NULL;
CREATE INDEX referral_conversions_by_order ON referral_conversions (workspace_id, order_id) WHERE order_id IS NOT NULL;
CREATE INDEX referral_conversions_by_referrer ON referral_conversions (workspace_id, referrer_customer_id);

CREATE TABLE referral_outcomes (
  workspace_id uuid NOT NULL,
  conversion_id uuid NOT NULL REFERENCES referral_conversions (id) ON DELETE CASCADE,
  side text NOT NULL CHECK (side IN ('REFERRER', 'REFEREE')),
  reward_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('PENDING', 'GRANTED', 'REVERTED', 'FAILED')),
  issued jsonb,
  detail text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversion_id, side, reward_id)
);

-- The outbox events referrals react to, copied in the transaction that records them (as loyalty's inbox does): an
-- order paid confirms its pending conversions (and again those its cancellation reverted), an order canceled reverts
-- them; a confirmed conversion grants its rewards and a reverted one takes them back. Each reaction commits with the
-- deletion of its row, so exactly once.
CREATE TABLE referral_event_inbox (
  workspace_id uuid NOT NULL,
  event_id uuid PRIMARY KEY,
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX referral_event_inbox_by_created ON referral_event_inbox (created_at);

CREATE FUNCTION referral_inbox_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO referral_event_inbox (workspace_id, event_id, type, payload, created_at)
  VALUES (NEW.workspace_id, NEW.id, NEW.type, NEW.payload, NEW.created_at) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER events_referral_inbox AFTER INSERT ON events FOR EACH ROW
  WHEN (NEW.type IN ('order.paid', 'order.canceled', 'referral.conversion.confirmed', 'referral.conversion.reverted'))
  EXECUTE FUNCTION referral_inbox_event();

-- Insights: a workspace's conversions of a period (GET /insights/referrals) through an index, never a scan.
CREATE INDEX referral_conversions_by_created ON referral_conversions (workspace_id, created_at);
