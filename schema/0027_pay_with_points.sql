-- Pay with points: a loyalty card's code redeemed like a gift card whose money is its points at the program's
-- pointValue. The redemption keeps the points it took and the ledger entry of that debit (loyalty_debit), so that a
-- rollback gives the very points back into the buckets they came from (loyalty_refund). Both are set in the
-- transaction that inserts the redemption, by the statement that debits the card.
ALTER TABLE redemptions DROP CONSTRAINT redemptions_kind_check;
ALTER TABLE redemptions ADD CONSTRAINT redemptions_kind_check CHECK (kind IN ('DISCOUNT', 'GIFT', 'POINTS'));
ALTER TABLE redemptions
  ADD COLUMN points bigint CHECK (points > 0 AND points <= 9007199254740991),
  ADD COLUMN points_entry_id uuid;

-- A validation session of a loyalty card reserves points (voucher_sessions.amount is in the voucher's own unit: gift
-- credits for a gift card, points for a card). Reservations are checked against the card's points when a session is
-- written. Points spent outside the engine (rewards, transfers, adjustments) are not blocked by reservations: the
-- redemption that consumes such a session is then refused by loyalty_debit's guard (loyalty_points_insufficient).
CREATE OR REPLACE FUNCTION check_voucher_reservations(voucher uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  reserved record;
  v record;
BEGIN
  SELECT count(*) AS uses, coalesce(sum(amount), 0) AS amount INTO reserved
    FROM voucher_sessions WHERE voucher_id = voucher AND expires_at > clock_timestamp();
  IF reserved.uses = 0 THEN RETURN; END IF;
  SELECT redemption_limit, redeemed_count,
         CASE WHEN type = 'LOYALTY_CARD' THEN points_balance ELSE gift_balance END AS balance
    INTO v FROM vouchers WHERE id = voucher;
  IF NOT FOUND THEN RETURN; END IF;
  IF (v.redemption_limit IS NOT NULL AND v.redeemed_count + reserved.uses > v.redemption_limit)
     OR reserved.amount > coalesce(v.balance, 0) THEN
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'engine guard: vouchers';
  END IF;
END $$;
