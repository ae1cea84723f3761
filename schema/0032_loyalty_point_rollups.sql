-- Insights: the points ledger's figures of a period (GET /insights/loyalty) read from hourly rollups instead of the
-- ledger (0030's index on the ledger by created_at is no longer read, so it is dropped: one index less per ledger write).

-- loyalty_point_rollups: points moved per workspace, program, hour and writer, by kind of movement. A trigger on
-- loyalty_ledger_entries adds each entry to its row in the entry's own transaction, so every path that writes the
-- ledger (the functions of 0018, the engine's pay with points, the jobs) is counted, exactly, and rolls back with it.
-- `writer` is the backend pid of the writing session: no two open transactions ever share a row, so the rollup adds
-- no lock wait and no lock-order question to the ledger's writers (their only locks stay the cards'). `hour` is the
-- start of the hour in the workspace's time zone at the write, as in redemption_rollups. Activations and transfers
-- move points between states or cards and are not counted. A query reads at most hours x programs x writers rows,
-- however many entries the period holds (README, "Insights": measured against reading the ledger by an index).
CREATE TABLE loyalty_point_rollups (
  workspace_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  program_id uuid NOT NULL,
  writer integer NOT NULL,
  -- POINTS_EARNED, PENDING_ADDED (pending points count when granted)
  earned bigint NOT NULL DEFAULT 0,
  -- REDEMPTION, REWARD_REDEMPTION
  spent bigint NOT NULL DEFAULT 0,
  -- ROLLBACK, REWARD_REFUND
  refunded bigint NOT NULL DEFAULT 0,
  -- POINTS_EXPIRED
  expired bigint NOT NULL DEFAULT 0,
  -- EARNING_REVERSED, PENDING_CANCELED
  reversed bigint NOT NULL DEFAULT 0,
  -- ADJUSTMENT, signed
  adjusted bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, hour, program_id, writer)
) WITH (fillfactor = 70);

-- Sums saturate at +-(2^53-1) instead of failing the ledger write that adds to them.
CREATE FUNCTION loyalty_point_rollups_add() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  moved bigint := NEW.amount + NEW.pending_amount;
  program uuid;
  zone text;
BEGIN
  IF NEW.type IN ('PENDING_ACTIVATED', 'TRANSFER_OUT', 'TRANSFER_IN') THEN RETURN NULL; END IF;
  SELECT campaign_id INTO program FROM vouchers WHERE id = NEW.member_id;
  SELECT time_zone INTO zone FROM workspaces WHERE workspace_id = NEW.workspace_id;
  IF program IS NULL OR zone IS NULL THEN RETURN NULL; END IF;
  INSERT INTO loyalty_point_rollups AS r (workspace_id, hour, program_id, writer, earned, spent, refunded, expired, reversed, adjusted)
  VALUES (NEW.workspace_id, date_trunc('hour', NEW.created_at AT TIME ZONE zone) AT TIME ZONE zone, program, pg_backend_pid(),
    CASE WHEN NEW.type IN ('POINTS_EARNED', 'PENDING_ADDED') THEN moved ELSE 0 END,
    CASE WHEN NEW.type IN ('REDEMPTION', 'REWARD_REDEMPTION') THEN -moved ELSE 0 END,
    CASE WHEN NEW.type IN ('ROLLBACK', 'REWARD_REFUND') THEN moved ELSE 0 END,
    CASE WHEN NEW.type = 'POINTS_EXPIRED' THEN -moved ELSE 0 END,
    CASE WHEN NEW.type IN ('EARNING_REVERSED', 'PENDING_CANCELED') THEN -moved ELSE 0 END,
    CASE WHEN NEW.type = 'ADJUSTMENT' THEN moved ELSE 0 END)
  ON CONFLICT (workspace_id, hour, program_id, writer) DO UPDATE SET
    earned = least(r.earned + EXCLUDED.earned, 9007199254740991),
    spent = least(r.spent + EXCLUDED.spent, 9007199254740991),
    refunded = least(r.refunded + EXCLUDED.refunded, 9007199254740991),
    expired = least(r.expired + EXCLUDED.expired, 9007199254740991),
    reversed = least(r.reversed + EXCLUDED.reversed, 9007199254740991),
    adjusted = greatest(least(r.adjusted + EXCLUDED.adjusted, 9007199254740991), -9007199254740991);
  RETURN NULL;
END $$;

-- CREATE TRIGGER locks the ledger against writes until this migration commits, so the backfill below misses nothing.
CREATE TRIGGER loyalty_point_rollups_add AFTER INSERT ON loyalty_ledger_entries
  FOR EACH ROW EXECUTE FUNCTION loyalty_point_rollups_add();

INSERT INTO loyalty_point_rollups (workspace_id, hour, program_id, writer, earned, spent, refunded, expired, reversed, adjusted)
SELECT e.workspace_id, date_trunc('hour', e.created_at AT TIME ZONE w.time_zone) AT TIME ZONE w.time_zone, v.campaign_id, 0,
       least(coalesce(sum(e.amount + e.pending_amount) FILTER (WHERE e.type IN ('POINTS_EARNED', 'PENDING_ADDED')), 0), 9007199254740991),
       least(coalesce(sum(-e.amount - e.pending_amount) FILTER (WHERE e.type IN ('REDEMPTION', 'REWARD_REDEMPTION')), 0), 9007199254740991),
       least(coalesce(sum(e.amount + e.pending_amount) FILTER (WHERE e.type IN ('ROLLBACK', 'REWARD_REFUND')), 0), 9007199254740991),
       least(coalesce(sum(-e.amount - e.pending_amount) FILTER (WHERE e.type = 'POINTS_EXPIRED'), 0), 9007199254740991),
       least(coalesce(sum(-e.amount - e.pending_amount) FILTER (WHERE e.type IN ('EARNING_REVERSED', 'PENDING_CANCELED')), 0), 9007199254740991),
       greatest(least(coalesce(sum(e.amount + e.pending_amount) FILTER (WHERE e.type = 'ADJUSTMENT'), 0), 9007199254740991), -9007199254740991)
  FROM loyalty_ledger_entries e
  JOIN vouchers v ON v.id = e.member_id AND v.campaign_id IS NOT NULL
  JOIN workspaces w ON w.workspace_id = e.workspace_id
 WHERE e.type NOT IN ('PENDING_ACTIVATED', 'TRANSFER_OUT', 'TRANSFER_IN')
 GROUP BY 1, 2, 3;

DROP INDEX IF EXISTS loyalty_ledger_entries_by_created;
