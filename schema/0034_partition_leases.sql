-- Partition ownership across processes (README, "Scaling out"). The vouchers hash to SLOTS logical partitions (64,
-- fixed: every process must agree); each slot is leased by one web process at a time. `token` grows by one at every
-- change of owner and every engine write carries the token it was decided under: the batch statement locks the lease
-- row FOR KEY SHARE and matches the token, so a takeover (FOR UPDATE) waits for the writes in flight, and a write with
-- a dead or former owner's token is refused. Expiry is judged by the database's clock only.
-- These tables describe the installation, not a tenant: they carry no workspace_id (like schema_migrations).
CREATE TABLE engine_members (
  member_id uuid PRIMARY KEY,
  -- Where the member answers forwarded partition calls (http://host:port).
  url text NOT NULL,
  pid integer NOT NULL,
  host text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE partition_leases (
  slot smallint PRIMARY KEY CHECK (slot >= 0 AND slot < 64),
  owner uuid,
  url text,
  token bigint NOT NULL DEFAULT 0,
  expires_at timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO partition_leases (slot) SELECT generate_series(0, 63);

-- The shared secret of the forwarding link between members: read from here by each, so no setting has to agree.
CREATE TABLE engine_secret (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  secret text NOT NULL
);
INSERT INTO engine_secret (secret) VALUES (replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
