-- Bounds of the loyalty figures the first loyalty migration left open: every stored points figure stays within
-- 2^53-1 (the largest integer a JSON number carries exactly), as the balances on the card already do.
ALTER TABLE loyalty_ledger_entries ADD CONSTRAINT loyalty_ledger_entries_balance_after_within_safe_range
  CHECK (balance_after BETWEEN -9007199254740991 AND 9007199254740991);
ALTER TABLE loyalty_point_draws ADD CONSTRAINT loyalty_point_draws_points_within_safe_range
  CHECK (points <= 9007199254740991);
ALTER TABLE loyalty_earnings ADD CONSTRAINT loyalty_earnings_points_within_safe_range
  CHECK (points <= 9007199254740991);
