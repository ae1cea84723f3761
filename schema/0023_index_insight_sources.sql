-- Indexes the insights read besides the rollups: a workspace's gift cards (liability), and its webhook deliveries by
-- status and attempts by time (delivery health), so none of them reads the whole table.
-- No indexed column here is one the engine updates (gift_balance, redeemed_count), so its updates stay HOT.
CREATE INDEX vouchers_gift_cards ON vouchers (workspace_id) WHERE type = 'GIFT_CARD';
CREATE INDEX webhook_deliveries_by_workspace_status ON webhook_deliveries (workspace_id, status, created_at);
CREATE INDEX webhook_delivery_attempts_by_workspace ON webhook_delivery_attempts (workspace_id, created_at);
