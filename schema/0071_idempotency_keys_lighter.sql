-- Every keyed write inserts one idempotency_keys row in the batch that commits it, and the reply stored there is read
-- back only when the key is used again (rare: a client's retry). Two costs of that insert were paid for nothing:
-- - `response jsonb`: each reply was parsed into jsonb's binary form on the way in, and turned back into text on the
--   rare way out. `json` keeps the text as sent (checked to be JSON) and answers it as is.
-- - a btree on created_at, only for the pruning job's "older than": a row's created_at grows with its place in the
--   table, which a BRIN index summarises per block range at almost no cost per insert.
-- Measured with 100,000-row inserts like the batch's (a reply of ~800 bytes, random UUID keys), PostgreSQL 15 on 2
-- cores: 46-50 µs a row before, 25-26 µs after. The type change rewrites the table once (it holds only the keys of
-- the retention window).
ALTER TABLE idempotency_keys ALTER COLUMN response TYPE json USING response::json;
DROP INDEX idempotency_keys_by_created;
CREATE INDEX idempotency_keys_by_created ON idempotency_keys USING brin (created_at);
