-- The audit log: one entry per successful mutation, written in the transaction of the change (append-only).
-- Entries are never changed: a trigger refuses UPDATE. Only the retention job deletes them, oldest first.
CREATE TABLE audit_entries (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  actor_type text NOT NULL CHECK (actor_type IN ('api_key', 'staff_user', 'system')),
  actor_id text NOT NULL,
  actor_label text NOT NULL,
  operation text NOT NULL,
  resource_type text NOT NULL,
  resource_id text,
  changes jsonb,
  request_id text NOT NULL,
  ip text,
  user_agent text
);
CREATE INDEX audit_entries_by_created ON audit_entries (workspace_id, created_at DESC, id DESC);
CREATE INDEX audit_entries_by_resource ON audit_entries (workspace_id, resource_type, resource_id, created_at DESC, id DESC);
-- A resource id without its type (the filters are independent).
CREATE INDEX audit_entries_by_resource_id ON audit_entries (workspace_id, resource_id, created_at DESC, id DESC) WHERE resource_id IS NOT NULL;
CREATE INDEX audit_entries_by_actor ON audit_entries (workspace_id, actor_id, created_at DESC, id DESC);
CREATE INDEX audit_entries_by_operation ON audit_entries (workspace_id, operation, created_at DESC, id DESC);
-- Retention deletes across workspaces by age.
CREATE INDEX audit_entries_by_age ON audit_entries (created_at);

CREATE FUNCTION refuse_audit_entry_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit entries cannot be changed' USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER audit_entries_immutable BEFORE UPDATE ON audit_entries
  FOR EACH ROW EXECUTE FUNCTION refuse_audit_entry_update();
