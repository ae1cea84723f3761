-- Bulk imports (vouchers, customers) as job resources: status, exact counts and the first rejections. The rows
-- themselves are staged in a temporary table of the importing session and merged into their table in batches.
CREATE TABLE imports (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL CHECK (kind IN ('vouchers', 'customers')),
  status text NOT NULL CHECK (status IN ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED')),
  format text NOT NULL CHECK (format IN ('csv', 'ndjson')),
  campaign_id uuid,
  rows_read bigint NOT NULL DEFAULT 0 CHECK (rows_read >= 0),
  rows_inserted bigint NOT NULL DEFAULT 0 CHECK (rows_inserted >= 0),
  rows_rejected bigint NOT NULL DEFAULT 0 CHECK (rows_rejected >= 0),
  -- The first rejections: [{ row, code, reason }], row = the 1-based data row (the CSV header is not a row).
  rejections jsonb NOT NULL DEFAULT '[]',
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  -- Moved by every merged batch: a RUNNING import whose heartbeat stopped was cut off (its process ended).
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT imports_counts_add_up CHECK (rows_inserted + rows_rejected <= rows_read)
);
CREATE INDEX imports_by_created ON imports (workspace_id, created_at DESC, id DESC);
