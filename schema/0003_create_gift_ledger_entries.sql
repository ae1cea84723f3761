-- The append-only gift card ledger: vouchers.gift_balance is a cache of the sum of a card's entries.
CREATE TABLE gift_ledger_entries (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  voucher_id uuid NOT NULL REFERENCES vouchers (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('CREDITS_ADDED', 'REDEMPTION', 'ROLLBACK', 'ADJUSTMENT')),
  amount bigint NOT NULL,
  balance_after bigint NOT NULL CHECK (balance_after >= 0),
  redemption_id uuid,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gift_ledger_entries_by_voucher ON gift_ledger_entries (voucher_id, created_at DESC, id DESC);
