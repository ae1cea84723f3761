-- A workspace's default currency (PATCH /workspace): a voucher whose amounts are money, made while neither it nor its
-- campaign names a currency, takes this one, stored on the voucher. NULL until set; once set it can change, not go.
ALTER TABLE workspaces ADD COLUMN default_currency text CHECK (default_currency ~ '^[A-Z]{3}$');
