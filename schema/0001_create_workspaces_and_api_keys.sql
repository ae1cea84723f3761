-- Workspaces (tenants) and their API keys. Only a SHA-256 hash of each key's secret is stored.
CREATE TABLE workspaces (
  workspace_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  is_default boolean NOT NULL DEFAULT false,
  stack_limit integer NOT NULL DEFAULT 5 CHECK (stack_limit BETWEEN 1 AND 30),
  time_zone text NOT NULL DEFAULT 'UTC',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX workspaces_one_default ON workspaces (is_default) WHERE is_default;

CREATE TABLE api_keys (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  prefix text NOT NULL UNIQUE CHECK (prefix ~ '^[A-Za-z0-9]{12}$'),
  secret_hash bytea NOT NULL,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_by_created ON api_keys (workspace_id, created_at DESC, id DESC);
