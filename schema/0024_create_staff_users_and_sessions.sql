-- Staff users (people who sign in to the dashboard), their browser sessions and their invitations. Only hashes of
-- session and invitation tokens are stored; passwords as scrypt hashes with their parameters.
CREATE TABLE staff_users (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- Lower-cased; one person signs in to one workspace, so an email is unique across workspaces.
  email text NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) <= 320),
  name text CHECK (length(name) <= 200),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  password_hash text NOT NULL,
  password_changed_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX staff_users_by_created ON staff_users (workspace_id, created_at DESC, id DESC);

-- A session lives until its absolute end (expires_at) or until it has been idle too long (last_seen_at); removing
-- the user removes its sessions (cascade), a password change deletes them.
CREATE TABLE staff_sessions (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  staff_user_id uuid NOT NULL REFERENCES staff_users (id) ON DELETE CASCADE,
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX staff_sessions_by_user ON staff_sessions (workspace_id, staff_user_id);
CREATE INDEX staff_sessions_by_expiry ON staff_sessions (expires_at);

-- An invitation is accepted at most once (accepted_at set under the guard accepted_at IS NULL) and only before
-- expires_at.
CREATE TABLE staff_invitations (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL CHECK (email = lower(email) AND length(email) <= 320),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  token_hash bytea NOT NULL UNIQUE,
  invited_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  staff_user_id uuid REFERENCES staff_users (id) ON DELETE SET NULL
);
CREATE INDEX staff_invitations_by_created ON staff_invitations (workspace_id, created_at DESC, id DESC);
