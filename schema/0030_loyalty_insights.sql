-- Insights: a workspace's points ledger of a period (GET /insights/loyalty) through an index, never a scan of the
-- whole ledger; the members of a program by tier through vouchers_loyalty_members_by_created (campaign_id).
CREATE INDEX loyalty_ledger_entries_by_created ON loyalty_ledger_entries (workspace_id, created_at);
