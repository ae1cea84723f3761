-- Webhook endpoints, their deliveries and the attempts of each delivery. Events gain a dispatch mark: the worker's
-- dispatcher turns undispatched events into deliveries (the outbox stays one INSERT in the recording transaction).
ALTER TABLE events ADD COLUMN dispatched_at timestamptz;
UPDATE events SET dispatched_at = created_at;
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;

CREATE TABLE webhook_endpoints (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY,
  url text NOT NULL,
  description text,
  -- NULL subscribes to every event type, including types added later ("*").
  event_types text[],
  active boolean NOT NULL DEFAULT true,
  -- AES-256-GCM (iv || tag || ciphertext) under a key derived from SECRET_KEY, bound to the endpoint id.
  secret_ciphertext bytea NOT NULL,
  previous_secret_ciphertext bytea,
  previous_secret_expires_at timestamptz,
  secret_rotated_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_by_created ON webhook_endpoints (workspace_id, created_at DESC, id DESC);

CREATE TABLE webhook_deliveries (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  event_type text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'retry_scheduled', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  -- The schedule step the outstanding scheduled job carries; a job for another step is stale and does nothing.
  step integer NOT NULL DEFAULT 0,
  -- A job the web service asked for (first attempt of an event replayed to an endpoint, or a manual replay);
  -- the worker's dispatcher enqueues it and clears the mark.
  requested_job text CHECK (requested_job IN ('scheduled', 'replay')),
  next_retry_at timestamptz,
  last_attempt_at timestamptz,
  response_status integer,
  response_body text,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_deliveries_one_per_event UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_by_status ON webhook_deliveries (endpoint_id, status, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_requested ON webhook_deliveries (updated_at) WHERE requested_job IS NOT NULL;

CREATE TABLE webhook_delivery_attempts (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  number integer NOT NULL,
  trigger text NOT NULL CHECK (trigger IN ('scheduled', 'replay')),
  succeeded boolean NOT NULL,
  response_status integer,
  response_body text,
  error text,
  duration_ms integer NOT NULL,
  -- When the attempt started.
  created_at timestamptz NOT NULL,
  CONSTRAINT webhook_delivery_attempts_number_unique UNIQUE (delivery_id, number)
);
CREATE INDEX webhook_delivery_attempts_by_delivery ON webhook_delivery_attempts (delivery_id, created_at DESC, id DESC);
