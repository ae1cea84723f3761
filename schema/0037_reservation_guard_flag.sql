-- The reservation guard (0016) ran for every voucher row whose use or credits an engine batch took: two PL/pgSQL calls
-- and a read of voucher_sessions, about as much as the update itself (5,000 rows in one UPDATE: ~10 µs a row without
-- it, ~22 µs with it; one row per UPDATE: ~51 µs without, ~80 µs with), though most vouchers never had a session. A voucher now says whether it ever had one
-- (reserved_ever, set once, never cleared: clearing it could race a session being written) and the trigger's WHEN
-- clause skips the others without calling anything.
--
-- Why no reservation is missed: a session row is written only with its voucher row locked (the engine statement's
-- `locked` part; the flag update below locks it too), and the flag is set in that transaction before the session is
-- checked. A redemption that commits first is seen by the session's check (0016). A redemption that waits for the lock
-- updates the row as the session's transaction left it, flag set, so its own check runs, on a fresh snapshot that sees
-- the session. A redemption in the same statement as a new session is covered by the session's check, which runs
-- after the statement's changes.
ALTER TABLE vouchers ADD COLUMN reserved_ever boolean NOT NULL DEFAULT false;
UPDATE vouchers SET reserved_ever = true WHERE id IN (SELECT voucher_id FROM voucher_sessions);

CREATE OR REPLACE FUNCTION voucher_sessions_within_limits() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE vouchers SET reserved_ever = true WHERE id = NEW.voucher_id AND NOT reserved_ever;
  PERFORM check_voucher_reservations(NEW.voucher_id);
  RETURN NULL;
END $$;

DROP TRIGGER vouchers_within_reservations ON vouchers;
CREATE TRIGGER vouchers_within_reservations AFTER UPDATE OF redeemed_count, gift_balance ON vouchers FOR EACH ROW
  WHEN (NEW.reserved_ever AND (NEW.redeemed_count > OLD.redeemed_count OR NEW.gift_balance < OLD.gift_balance))
  EXECUTE FUNCTION vouchers_within_reservations();
