-- Order returns and cancellations: an order gives back, return by return, what it moved (contract: "Order returns
-- and cancellations"). The order keeps what was returned (amount and units per line); each redemption keeps the
-- discount returned on it and the gift credits given back; each earning the multiplier it was earned at and the
-- points a return took back of it.
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders ADD CONSTRAINT orders_status_check
  CHECK (status IN ('CREATED', 'PAID', 'CANCELED', 'FULFILLED', 'PARTIALLY_RETURNED', 'RETURNED'));
ALTER TABLE orders
  ADD COLUMN returned_amount bigint NOT NULL DEFAULT 0 CHECK (returned_amount BETWEEN 0 AND 9007199254740991),
  ADD COLUMN returned_units jsonb NOT NULL DEFAULT '[]';

ALTER TABLE redemptions
  ADD COLUMN returned_amount bigint NOT NULL DEFAULT 0 CHECK (returned_amount BETWEEN 0 AND 9007199254740991),
  ADD COLUMN returned_credit bigint NOT NULL DEFAULT 0 CHECK (returned_credit BETWEEN 0 AND 9007199254740991),
  -- A discount's share of each order item (the outcome's order.items[].discountAmount), null without items.
  ADD COLUMN item_discounts jsonb;

CREATE TABLE order_returns (
  workspace_id uuid NOT NULL REFERENCES workspaces (workspace_id) ON DELETE CASCADE,
  id uuid PRIMARY KEY,
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  amount bigint NOT NULL CHECK (amount BETWEEN 0 AND 9007199254740991),
  items jsonb NOT NULL DEFAULT '[]',
  reversals jsonb NOT NULL,
  reason text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX order_returns_by_order ON order_returns (workspace_id, order_id, created_at, id);

ALTER TABLE gift_ledger_entries DROP CONSTRAINT gift_ledger_entries_type_check;
ALTER TABLE gift_ledger_entries ADD CONSTRAINT gift_ledger_entries_type_check
  CHECK (type IN ('CREDITS_ADDED', 'REDEMPTION', 'ROLLBACK', 'ADJUSTMENT', 'RETURN'));
ALTER TABLE loyalty_ledger_entries DROP CONSTRAINT loyalty_ledger_entries_type_check;
ALTER TABLE loyalty_ledger_entries ADD CONSTRAINT loyalty_ledger_entries_type_check
  CHECK (type IN ('POINTS_EARNED', 'PENDING_ADDED', 'PENDING_ACTIVATED', 'PENDING_CANCELED',
    'EARNING_REVERSED', 'POINTS_EXPIRED', 'REWARD_REDEMPTION', 'REWARD_REFUND', 'REDEMPTION', 'ROLLBACK', 'ADJUSTMENT',
    'TRANSFER_OUT', 'TRANSFER_IN', 'RETURN'));

-- Ten-thousandths, as findMultiplier gives it; null for earnings made before this column.
ALTER TABLE loyalty_earnings ADD COLUMN multiplier bigint;

-- Takes p_points of an earning back (a partial return of its order): a PENDING bucket gives them from its pending
-- points (PENDING_CANCELED); an ACTIVE or EXPIRED one from what it still holds, the rest from the card's other buckets
-- (FIFO), down to 0 under TO_ZERO or below under ALLOW_NEGATIVE (a RETURN entry). The bucket's points shrink with it,
-- so a later whole reversal (loyalty_reverse_earning) takes exactly the rest; lifetime loses the points of an active
-- earning. The caller takes less than the earning holds (the whole of it: loyalty_reverse_earning).
CREATE FUNCTION loyalty_reduce_earning(p_workspace uuid, p_earning uuid, p_points bigint, p_mode text, p_source_type text, p_source_id text)
RETURNS TABLE (entry_id uuid, member_id uuid, points bigint, pending_points bigint, balance_after bigint) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  earning loyalty_earnings;
  card vouchers;
  b loyalty_point_buckets;
  entry uuid;
  held bigint;
  shortfall bigint;
  drawn bigint;
  taken bigint;
BEGIN
  SELECT * INTO earning FROM loyalty_earnings e WHERE e.workspace_id = p_workspace AND e.id = p_earning;
  IF NOT FOUND OR earning.reversed_at IS NOT NULL OR p_points <= 0 THEN RETURN; END IF;
  card := loyalty_lock_card(p_workspace, earning.member_id);
  SELECT * INTO b FROM loyalty_point_buckets WHERE id = earning.bucket_id FOR UPDATE;
  IF p_points >= b.points THEN RAISE EXCEPTION 'loyalty_reduce_earning: % of % points: reverse the earning instead', p_points, b.points; END IF;
  UPDATE loyalty_earnings e SET points = e.points - p_points WHERE e.id = p_earning;
  IF b.status = 'PENDING' THEN
    UPDATE loyalty_point_buckets SET points = points - p_points, remaining = remaining - p_points WHERE id = b.id;
    UPDATE vouchers SET points_pending = points_pending - p_points WHERE id = card.id;
    INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, pending_amount, balance_after, source_type,
      source_id, order_id, earning_rule_id, bucket_id)
    VALUES (p_workspace, card.id, 'PENDING_CANCELED', 0, -p_points, card.points_balance, p_source_type, p_source_id,
      earning.order_id::text, earning.earning_rule_id, b.id)
    RETURNING id INTO entry;
    RETURN QUERY SELECT entry, card.id, 0::bigint, p_points, card.points_balance;
    RETURN;
  END IF;
  held := CASE WHEN b.status = 'ACTIVE' THEN LEAST(b.remaining, p_points) ELSE 0 END;
  UPDATE loyalty_point_buckets SET points = points - p_points, remaining = remaining - held,
    expired = LEAST(expired, points - p_points) WHERE id = b.id;
  shortfall := p_points - held;
  INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, balance_after, source_type, source_id,
    order_id, earning_rule_id, bucket_id)
  VALUES (p_workspace, card.id, 'RETURN', 0, card.points_balance, p_source_type, p_source_id,
    earning.order_id::text, earning.earning_rule_id, b.id)
  RETURNING id INTO entry;
  drawn := loyalty_draw(p_workspace, card.id, LEAST(shortfall, GREATEST(card.points_balance - held, 0)), entry);
  taken := held + CASE WHEN p_mode = 'ALLOW_NEGATIVE' THEN shortfall ELSE drawn END;
  UPDATE vouchers SET points_balance = points_balance - taken, points_lifetime = greatest(0, points_lifetime - p_points) WHERE id = card.id;
  UPDATE loyalty_ledger_entries SET amount = -taken, balance_after = card.points_balance - taken WHERE id = entry;
  RETURN QUERY SELECT entry, card.id, taken, 0::bigint, card.points_balance - taken;
END $$;
