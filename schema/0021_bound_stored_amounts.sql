-- Bounds: a stored amount stays within 2^53-1, the largest integer a JSON number carries exactly. The operations
-- check the results they would store (a 4xx or an outcome code); these constraints make a value past the bound
-- impossible to write even so. Current figures are brought down to the bound first; history (redemptions, their
-- rollbacks) stays as written (NOT VALID: new rows are checked) and reads as the bound (platform/database.ts).
UPDATE orders SET amount = 9007199254740991 WHERE amount > 9007199254740991;
ALTER TABLE orders ADD CONSTRAINT orders_amount_within_safe_range CHECK (amount <= 9007199254740991);

-- The cap of a voucher's or a tier's discount (tiers are voucher rows).
UPDATE vouchers SET max_discount = 9007199254740991 WHERE max_discount > 9007199254740991;
ALTER TABLE vouchers ADD CONSTRAINT vouchers_max_discount_within_safe_range CHECK (max_discount <= 9007199254740991);

ALTER TABLE redemptions ADD CONSTRAINT redemptions_amounts_within_safe_range
  CHECK (amount <= 9007199254740991 AND order_amount BETWEEN 0 AND 9007199254740991) NOT VALID;
ALTER TABLE redemption_rollbacks ADD CONSTRAINT redemption_rollbacks_amount_within_safe_range
  CHECK (amount BETWEEN -9007199254740991 AND 9007199254740991) NOT VALID;
