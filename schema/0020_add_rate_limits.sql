-- Rate limits (token buckets, enforced in memory by each web process): a key's own limit, and the workspace's
-- default for keys without one. NULL: not set, the next level applies (workspace default, then the server's).
ALTER TABLE api_keys
  ADD COLUMN rate_limit_per_second integer CHECK (rate_limit_per_second BETWEEN 1 AND 1000000),
  ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst BETWEEN 1 AND 10000000),
  ADD CONSTRAINT api_keys_rate_limit_whole CHECK ((rate_limit_per_second IS NULL) = (rate_limit_burst IS NULL));

ALTER TABLE workspaces
  ADD COLUMN rate_limit_per_second integer CHECK (rate_limit_per_second BETWEEN 1 AND 1000000),
  ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst BETWEEN 1 AND 10000000),
  ADD CONSTRAINT workspaces_rate_limit_whole CHECK ((rate_limit_per_second IS NULL) = (rate_limit_burst IS NULL));
