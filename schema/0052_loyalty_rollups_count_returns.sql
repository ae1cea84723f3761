-- Insights of loyalty points (GET /insights/loyalty) count what order returns move: a RETURN entry that gives points
-- back (points that paid for a returned share) counts as `refunded`, one that takes points (points earned on it) as
-- `reversed`. An earning taken back (EARNING_REVERSED, and a return's share of one: RETURN) is inserted with amount 0
-- and given its amount once the draw is known (loyalty_reverse_earning, loyalty_reduce_earning): the insert trigger
-- saw 0, so an update trigger adds what the entry took, in the same transaction, to the writer's row.
CREATE OR REPLACE FUNCTION loyalty_point_rollups_add_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO loyalty_point_rollups AS r (workspace_id, hour, program_id, writer, earned, spent, refunded, expired, reversed, adjusted)
  SELECT e.workspace_id, date_trunc('hour', e.created_at AT TIME ZONE w.time_zone) AT TIME ZONE w.time_zone, v.campaign_id, pg_backend_pid(),
         least(coalesce(sum(e.amount + e.pending_amount) FILTER (WHERE e.type IN ('POINTS_EARNED', 'PENDING_ADDED')), 0), 9007199254740991),
         least(coalesce(sum(-e.amount - e.pending_amount) FILTER (WHERE e.type IN ('REDEMPTION', 'REWARD_REDEMPTION')), 0), 9007199254740991),
         least(coalesce(sum(e.amount + e.pending_amount) FILTER (WHERE e.type IN ('ROLLBACK', 'REWARD_REFUND')
           OR (e.type = 'RETURN' AND e.amount + e.pending_amount > 0)), 0), 9007199254740991),
         least(coalesce(sum(-e.amount - e.pending_amount) FILTER (WHERE e.type = 'POINTS_EXPIRED'), 0), 9007199254740991),
         least(coalesce(sum(-e.amount - e.pending_amount) FILTER (WHERE e.type IN ('EARNING_REVERSED', 'PENDING_CANCELED')
           OR (e.type = 'RETURN' AND e.amount + e.pending_amount < 0)), 0), 9007199254740991),
         greatest(least(coalesce(sum(e.amount + e.pending_amount) FILTER (WHERE e.type = 'ADJUSTMENT'), 0), 9007199254740991), -9007199254740991)
    FROM added_entries e
    JOIN vouchers v ON v.id = e.member_id
    JOIN workspaces w ON w.workspace_id = e.workspace_id
   WHERE e.type NOT IN ('PENDING_ACTIVATED', 'TRANSFER_OUT', 'TRANSFER_IN') AND v.campaign_id IS NOT NULL
   GROUP BY 1, 2, 3
   ORDER BY 1, 2, 3
  ON CONFLICT (workspace_id, hour, program_id, writer) DO UPDATE SET
    earned = least(r.earned + EXCLUDED.earned, 9007199254740991),
    spent = least(r.spent + EXCLUDED.spent, 9007199254740991),
    refunded = least(r.refunded + EXCLUDED.refunded, 9007199254740991),
    expired = least(r.expired + EXCLUDED.expired, 9007199254740991),
    reversed = least(r.reversed + EXCLUDED.reversed, 9007199254740991),
    adjusted = greatest(least(r.adjusted + EXCLUDED.adjusted, 9007199254740991), -9007199254740991);
  RETURN NULL;
END $$;

-- What an earning's reversal took, once its amount is set (only ever lowered from the 0 it was inserted with).
CREATE FUNCTION loyalty_point_rollups_add_taken() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  program uuid;
  zone text;
BEGIN
  SELECT campaign_id INTO program FROM vouchers WHERE id = NEW.member_id;
  SELECT time_zone INTO zone FROM workspaces WHERE workspace_id = NEW.workspace_id;
  IF program IS NULL OR zone IS NULL THEN RETURN NULL; END IF;
  INSERT INTO loyalty_point_rollups AS r (workspace_id, hour, program_id, writer, reversed)
  VALUES (NEW.workspace_id, date_trunc('hour', NEW.created_at AT TIME ZONE zone) AT TIME ZONE zone, program, pg_backend_pid(), OLD.amount - NEW.amount)
  ON CONFLICT (workspace_id, hour, program_id, writer) DO UPDATE SET reversed = least(r.reversed + EXCLUDED.reversed, 9007199254740991);
  RETURN NULL;
END $$;

CREATE TRIGGER loyalty_point_rollups_add_taken AFTER UPDATE OF amount ON loyalty_ledger_entries
  FOR EACH ROW WHEN (NEW.type IN ('EARNING_REVERSED', 'RETURN') AND NEW.amount < OLD.amount)
  EXECUTE FUNCTION loyalty_point_rollups_add_taken();

-- Entries written before this migration: the RETURN entries (order returns are new) and what earnings' reversals took.
INSERT INTO loyalty_point_rollups AS r (workspace_id, hour, program_id, writer, refunded, reversed)
SELECT e.workspace_id, date_trunc('hour', e.created_at AT TIME ZONE w.time_zone) AT TIME ZONE w.time_zone, v.campaign_id, 0,
       least(coalesce(sum(e.amount) FILTER (WHERE e.type = 'RETURN' AND e.amount > 0), 0), 9007199254740991),
       least(coalesce(sum(-e.amount) FILTER (WHERE e.amount < 0), 0), 9007199254740991)
  FROM loyalty_ledger_entries e
  JOIN vouchers v ON v.id = e.member_id AND v.campaign_id IS NOT NULL
  JOIN workspaces w ON w.workspace_id = e.workspace_id
 WHERE e.type IN ('RETURN', 'EARNING_REVERSED')
 GROUP BY 1, 2, 3
ON CONFLICT (workspace_id, hour, program_id, writer) DO UPDATE SET
  refunded = least(r.refunded + EXCLUDED.refunded, 9007199254740991),
  reversed = least(r.reversed + EXCLUDED.reversed, 9007199254740991);
