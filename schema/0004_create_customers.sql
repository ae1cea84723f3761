-- Customers; sourceId (the caller's own id) is unique per workspace.
CREATE TABLE customers (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  source_id text,
  email text,
  name text,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT customers_source_id_unique UNIQUE (workspace_id, source_id)
);
CREATE INDEX customers_by_created ON customers (workspace_id, created_at DESC, id DESC);
CREATE INDEX customers_by_email ON customers (workspace_id, lower(email));
