-- A customer's uses of a voucher (perCustomerLimit, referral codes, rules on customer.redemptions) are counted from the
-- customer's redemptions of it that are not rolled back (the index by customer), when a voucher reads them: no
-- redemption writes a counter row any more, and a limit set later counts the redemptions made before it.
DROP TABLE voucher_customer_uses;
