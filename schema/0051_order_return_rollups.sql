-- Insights: what order returns gave back, per workspace, currency, hour and writer, so GET /insights/redemptions
-- reports returned amounts and points per period without reading order_returns. A trigger on order_returns adds each
-- return to its row in the return's own transaction (partial returns, the last return and a cancel's whole return
-- alike), so the figures are exact and roll back with it. `writer` is the backend pid of the writing session, as in
-- loyalty_point_rollups: no two open transactions share a row. `hour` is the start of the hour in the workspace's
-- time zone at the write, as in redemption_rollups; `currency` is the order's.
CREATE TABLE order_return_rollups (
  workspace_id uuid NOT NULL,
  currency text NOT NULL,
  hour timestamptz NOT NULL,
  writer integer NOT NULL,
  returns bigint NOT NULL DEFAULT 0,
  -- What the customer paid that came back (order_returns.amount).
  amount bigint NOT NULL DEFAULT 0,
  -- reversals.discount, giftCredits, pointsPaid, pointsEarned
  discount bigint NOT NULL DEFAULT 0,
  gift_credits bigint NOT NULL DEFAULT 0,
  points_paid bigint NOT NULL DEFAULT 0,
  points_earned bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, hour, currency, writer)
) WITH (fillfactor = 70);

-- Sums saturate at 2^53-1 instead of failing the return that adds to them.
CREATE FUNCTION order_return_rollups_add() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  zone text;
  cur text;
BEGIN
  SELECT time_zone INTO zone FROM workspaces WHERE workspace_id = NEW.workspace_id;
  SELECT currency INTO cur FROM orders WHERE id = NEW.order_id;
  IF zone IS NULL THEN RETURN NULL; END IF;
  INSERT INTO order_return_rollups AS r (workspace_id, currency, hour, writer, returns, amount, discount, gift_credits, points_paid, points_earned)
  VALUES (NEW.workspace_id, coalesce(cur, ''), date_trunc('hour', NEW.created_at AT TIME ZONE zone) AT TIME ZONE zone, pg_backend_pid(), 1,
    NEW.amount,
    coalesce((NEW.reversals ->> 'discount')::bigint, 0),
    coalesce((NEW.reversals ->> 'giftCredits')::bigint, 0),
    coalesce((NEW.reversals ->> 'pointsPaid')::bigint, 0),
    coalesce((NEW.reversals ->> 'pointsEarned')::bigint, 0))
  ON CONFLICT (workspace_id, hour, currency, writer) DO UPDATE SET
    returns = least(r.returns + 1, 9007199254740991),
    amount = least(r.amount + EXCLUDED.amount, 9007199254740991),
    discount = least(r.discount + EXCLUDED.discount, 9007199254740991),
    gift_credits = least(r.gift_credits + EXCLUDED.gift_credits, 9007199254740991),
    points_paid = least(r.points_paid + EXCLUDED.points_paid, 9007199254740991),
    points_earned = least(r.points_earned + EXCLUDED.points_earned, 9007199254740991);
  RETURN NULL;
END $$;

-- CREATE TRIGGER locks order_returns against writes until this migration commits, so the backfill misses nothing.
CREATE TRIGGER order_return_rollups_add AFTER INSERT ON order_returns
  FOR EACH ROW EXECUTE FUNCTION order_return_rollups_add();

INSERT INTO order_return_rollups (workspace_id, currency, hour, writer, returns, amount, discount, gift_credits, points_paid, points_earned)
SELECT x.workspace_id, coalesce(o.currency, ''), date_trunc('hour', x.created_at AT TIME ZONE w.time_zone) AT TIME ZONE w.time_zone, 0,
       count(*), least(sum(x.amount), 9007199254740991),
       least(sum(coalesce((x.reversals ->> 'discount')::bigint, 0)), 9007199254740991),
       least(sum(coalesce((x.reversals ->> 'giftCredits')::bigint, 0)), 9007199254740991),
       least(sum(coalesce((x.reversals ->> 'pointsPaid')::bigint, 0)), 9007199254740991),
       least(sum(coalesce((x.reversals ->> 'pointsEarned')::bigint, 0)), 9007199254740991)
  FROM order_returns x
  JOIN workspaces w ON w.workspace_id = x.workspace_id
  LEFT JOIN orders o ON o.id = x.order_id
 GROUP BY 1, 2, 3;
