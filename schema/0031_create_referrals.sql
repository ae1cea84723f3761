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
