-- The event log (transactional outbox: written in the same transaction as the change it reports),
-- and the heartbeats of background worker processes, read by the web service's /ready.
CREATE TABLE events (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_by_created ON events (workspace_id, created_at DESC, id DESC);

-- A system table: it describes processes, not workspace data, so it has no workspace_id.
CREATE TABLE worker_heartbeats (
  worker_id text PRIMARY KEY,
  pid integer NOT NULL,
  host text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  beat_at timestamptz NOT NULL DEFAULT now()
);
