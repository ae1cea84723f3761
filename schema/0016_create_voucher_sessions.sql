-- Validation sessions (reservations) and the bounds of money. A session holds one use of a voucher (and the gift
-- credits validated) for one checkout key until that key redeems, it is released, or it expires. The owning partition
-- decides reservations in memory and writes them in its batch; a trigger checks them in SQL too, so a stale cache or
-- a second process cannot reserve past the limit or the balance, nor take a use or credits reserved by another.

CREATE TABLE voucher_sessions (
  workspace_id uuid NOT NULL,
  voucher_id uuid NOT NULL REFERENCES vouchers (id) ON DELETE CASCADE,
  key text NOT NULL,
  -- Gift credits reserved (0 for a discount voucher); the use itself is the row.
  amount bigint NOT NULL DEFAULT 0 CHECK (amount BETWEEN 0 AND 9007199254740991),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (voucher_id, key)
);
-- Expired rows count for nothing; the partitions delete them in their batches and by a periodic sweep.
CREATE INDEX voucher_sessions_by_expiry ON voucher_sessions (expires_at);

-- Live reservations of a voucher may not pass what its limit and balance leave. Called by AFTER ROW triggers, which
-- run at the end of the engine's statement on a fresh snapshot while that statement holds the voucher row locked:
-- two writers of one voucher are checked one after the other. Raises the engine's guard error, so the partition
-- reloads the voucher (and its sessions) and decides again.
CREATE FUNCTION check_voucher_reservations(voucher uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  reserved record;
  v record;
BEGIN
  SELECT count(*) AS uses, coalesce(sum(amount), 0) AS amount INTO reserved
    FROM voucher_sessions WHERE voucher_id = voucher AND expires_at > clock_timestamp();
  IF reserved.uses = 0 THEN RETURN; END IF;
  SELECT redemption_limit, redeemed_count, gift_balance INTO v FROM vouchers WHERE id = voucher;
  IF NOT FOUND THEN RETURN; END IF;
  IF (v.redemption_limit IS NOT NULL AND v.redeemed_count + reserved.uses > v.redemption_limit)
     OR reserved.amount > coalesce(v.gift_balance, 0) THEN
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'engine guard: vouchers';
  END IF;
END $$;

CREATE FUNCTION voucher_sessions_within_limits() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM check_voucher_reservations(NEW.voucher_id);
  RETURN NULL;
END $$;

CREATE FUNCTION vouchers_within_reservations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM check_voucher_reservations(NEW.id);
  RETURN NULL;
END $$;

CREATE TRIGGER voucher_sessions_within_limits AFTER INSERT OR UPDATE ON voucher_sessions FOR EACH ROW
  EXECUTE FUNCTION voucher_sessions_within_limits();
-- Only a use taken or credits taken can collide with reservations (a rollback or a top-up cannot).
CREATE TRIGGER vouchers_within_reservations AFTER UPDATE OF redeemed_count, gift_balance ON vouchers FOR EACH ROW
  WHEN (NEW.redeemed_count > OLD.redeemed_count OR NEW.gift_balance < OLD.gift_balance)
  EXECUTE FUNCTION vouchers_within_reservations();

-- Bounds: money travels as JSON numbers, exact only up to 2^53-1. A gift balance above it could be written before
-- this migration (a top-up was checked alone, not the balance it made); such a card is brought down to 2^53-1 with an
-- ADJUSTMENT entry, so its ledger still sums to its balance, and no balance can pass the bound again.
WITH over AS (
  UPDATE vouchers SET gift_balance = 9007199254740991
   WHERE gift_balance > 9007199254740991
  RETURNING workspace_id, id, gift_balance
), before AS (
  SELECT v.id, v.gift_balance AS balance FROM vouchers v JOIN over ON over.id = v.id
)
INSERT INTO gift_ledger_entries (workspace_id, voucher_id, type, amount, balance_after)
SELECT over.workspace_id, over.id, 'ADJUSTMENT', 9007199254740991 - before.balance, 9007199254740991
  FROM over JOIN before ON before.id = over.id;

ALTER TABLE vouchers ADD CONSTRAINT vouchers_gift_balance_within_safe_range CHECK (gift_balance <= 9007199254740991);
-- A budget's usage is a counter, not a ledger: one above the bound (as unlikely as it is) is simply capped.
UPDATE campaign_budget_usage SET discount_amount = 9007199254740991 WHERE discount_amount > 9007199254740991;
ALTER TABLE campaign_budget_usage ADD CONSTRAINT campaign_budget_usage_within_safe_range CHECK (discount_amount <= 9007199254740991);
-- Ledger rows are history and stay as written (the ledger's read clamps them); new ones stay within the bound.
ALTER TABLE gift_ledger_entries ADD CONSTRAINT gift_ledger_entries_within_safe_range
  CHECK (amount BETWEEN -9007199254740991 AND 9007199254740991 AND balance_after <= 9007199254740991) NOT VALID;
ALTER TABLE vouchers ADD CONSTRAINT vouchers_gift_amount_within_safe_range CHECK (gift_amount <= 9007199254740991) NOT VALID;
