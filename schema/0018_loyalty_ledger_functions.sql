-- The points ledger's writes, one function per kind of change. Each locks the card's row first (SELECT … FOR UPDATE:
-- one writer per card, whatever process calls), changes the buckets, appends the entry and moves the caches on the
-- card row in the caller's transaction. A spend is guarded in SQL (points_balance >= points): racing spends queue on
-- the row lock and each sees the balance the one before it left. The engine may call loyalty_debit and loyalty_refund
-- from its own statements (pay with points); a refused debit returns no row.
--
-- Invariant (checked by the tests after each one): balance = sum(amount), pending = sum(pending_amount) of the card's
-- entries; pending = sum(remaining) of its PENDING buckets; balance >= 0 implies balance = sum(remaining) of its
-- ACTIVE buckets, and balance < 0 (an ALLOW_NEGATIVE reversal) implies they hold nothing.

CREATE FUNCTION loyalty_lock_card(p_workspace uuid, p_member uuid) RETURNS vouchers LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  card vouchers;
BEGIN
  SELECT * INTO card FROM vouchers WHERE workspace_id = p_workspace AND id = p_member AND type = 'LOYALTY_CARD' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'P0002', MESSAGE = 'loyalty: no such member';
  END IF;
  RETURN card;
END $$;

CREATE FUNCTION loyalty_out_of_range() RETURNS void LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RAISE EXCEPTION USING ERRCODE = '22003', MESSAGE = 'loyalty: points out of range';
END $$;

-- Takes up to p_points from the card's ACTIVE buckets, earliest expiry first, never-expiring last; records the draws
-- under p_entry when given. The card must be locked by the caller. Returns what was taken.
CREATE FUNCTION loyalty_draw(p_workspace uuid, p_member uuid, p_points bigint, p_entry uuid) RETURNS bigint LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  b record;
  take bigint;
  left_over bigint := p_points;
BEGIN
  IF p_points <= 0 THEN RETURN 0; END IF;
  FOR b IN
    SELECT id, remaining FROM loyalty_point_buckets
     WHERE member_id = p_member AND status = 'ACTIVE' AND remaining > 0
     ORDER BY expires_at ASC NULLS LAST, created_at, id
     FOR UPDATE
  LOOP
    take := LEAST(b.remaining, left_over);
    UPDATE loyalty_point_buckets SET remaining = remaining - take WHERE id = b.id;
    IF p_entry IS NOT NULL THEN
      INSERT INTO loyalty_point_draws (workspace_id, entry_id, bucket_id, points) VALUES (p_workspace, p_entry, b.id, take);
    END IF;
    left_over := left_over - take;
    EXIT WHEN left_over = 0;
  END LOOP;
  RETURN p_points - left_over;
END $$;

-- A grant: a new bucket, PENDING until p_activates_at when that is in the future, else ACTIVE. POINTS_EARNED counts
-- into lifetime (pending points count when they activate). Points granted while the balance is negative pay that
-- debt first. p_type: POINTS_EARNED, ADJUSTMENT, TRANSFER_IN, REWARD_REFUND.
CREATE FUNCTION loyalty_grant(
  p_workspace uuid, p_member uuid, p_points bigint, p_type text, p_activates_at timestamptz, p_expires_at timestamptz,
  p_source_type text, p_source_id text, p_order_id text, p_rule_id uuid, p_reason text
) RETURNS TABLE (entry_id uuid, bucket_id uuid, balance_after bigint, pending boolean) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  card vouchers;
  bucket uuid;
  entry uuid;
  is_pending boolean := p_activates_at IS NOT NULL AND p_activates_at > now();
  debt bigint;
BEGIN
  IF p_points <= 0 THEN RAISE EXCEPTION 'loyalty_grant: points must be positive'; END IF;
  card := loyalty_lock_card(p_workspace, p_member);
  IF is_pending THEN
    IF card.points_pending + p_points > 9007199254740991 THEN PERFORM loyalty_out_of_range(); END IF;
    INSERT INTO loyalty_point_buckets (workspace_id, member_id, status, kind, points, remaining, activates_at, expires_at)
    VALUES (p_workspace, p_member, 'PENDING', p_type, p_points, p_points, p_activates_at, p_expires_at) RETURNING id INTO bucket;
    UPDATE vouchers SET points_pending = points_pending + p_points WHERE id = p_member;
    INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, pending_amount, balance_after, source_type,
      source_id, order_id, earning_rule_id, bucket_id, expires_at, activates_at, reason)
    VALUES (p_workspace, p_member, CASE WHEN p_type = 'POINTS_EARNED' THEN 'PENDING_ADDED' ELSE p_type END, 0, p_points,
      card.points_balance, p_source_type, p_source_id, p_order_id, p_rule_id, bucket, p_expires_at, p_activates_at, p_reason)
    RETURNING id INTO entry;
    RETURN QUERY SELECT entry, bucket, card.points_balance, true;
    RETURN;
  END IF;
  IF card.points_balance + p_points > 9007199254740991 OR card.points_lifetime + p_points > 9007199254740991 THEN
    PERFORM loyalty_out_of_range();
  END IF;
  INSERT INTO loyalty_point_buckets (workspace_id, member_id, status, kind, points, remaining, activates_at, expires_at)
  VALUES (p_workspace, p_member, 'ACTIVE', p_type, p_points, p_points, p_activates_at, p_expires_at) RETURNING id INTO bucket;
  UPDATE vouchers SET points_balance = points_balance + p_points,
    points_lifetime = points_lifetime + CASE WHEN p_type = 'POINTS_EARNED' THEN p_points ELSE 0 END
   WHERE id = p_member;
  debt := LEAST(GREATEST(-card.points_balance, 0), p_points);
  PERFORM loyalty_draw(p_workspace, p_member, debt, NULL);
  INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, balance_after, source_type, source_id,
    order_id, earning_rule_id, bucket_id, expires_at, activates_at, reason)
  VALUES (p_workspace, p_member, p_type, p_points, card.points_balance + p_points, p_source_type, p_source_id, p_order_id,
    p_rule_id, bucket, p_expires_at, p_activates_at, p_reason)
  RETURNING id INTO entry;
  RETURN QUERY SELECT entry, bucket, card.points_balance + p_points, false;
END $$;

-- A spend: the guard refuses (no row) unless the balance covers the points; else the points are drawn FIFO by expiry
-- and the draws recorded under the entry. p_type: REDEMPTION, REWARD_REDEMPTION, ADJUSTMENT, TRANSFER_OUT.
CREATE FUNCTION loyalty_debit(
  p_workspace uuid, p_member uuid, p_points bigint, p_type text, p_source_type text, p_source_id text, p_order_id text,
  p_reason text
) RETURNS TABLE (entry_id uuid, balance_after bigint) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  card vouchers;
  entry uuid;
  balance bigint;
  drawn bigint;
BEGIN
  IF p_points <= 0 THEN RAISE EXCEPTION 'loyalty_debit: points must be positive'; END IF;
  card := loyalty_lock_card(p_workspace, p_member);
  UPDATE vouchers SET points_balance = points_balance - p_points
   WHERE id = p_member AND points_balance >= p_points
  RETURNING points_balance INTO balance;
  IF NOT FOUND THEN RETURN; END IF;
  INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, balance_after, source_type, source_id, order_id, reason)
  VALUES (p_workspace, p_member, p_type, -p_points, balance, p_source_type, p_source_id, p_order_id, p_reason)
  RETURNING id INTO entry;
  drawn := loyalty_draw(p_workspace, p_member, p_points, entry);
  IF drawn <> p_points THEN
    RAISE EXCEPTION 'loyalty_debit: the buckets of % hold % of a balance of %', p_member, drawn, card.points_balance;
  END IF;
  RETURN QUERY SELECT entry, balance;
END $$;

-- Gives back a debit (all that is not given back yet, or p_points of it), into the very buckets it drew from, latest
-- expiry first. A bucket that expired (or was canceled past its expiry) meanwhile takes its share and expires it at
-- once (a POINTS_EXPIRED entry). p_type: ROLLBACK, REWARD_REFUND. No row when nothing is left to give back.
CREATE FUNCTION loyalty_refund(
  p_workspace uuid, p_debit_entry uuid, p_type text, p_source_type text, p_source_id text, p_points bigint
) RETURNS TABLE (entry_id uuid, balance_after bigint, points bigint) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  member uuid;
  card vouchers;
  d record;
  give bigint;
  wanted bigint;
  refilled bigint := 0;
  lapsed bigint := 0;
  debt bigint;
  entry uuid;
  balance bigint;
BEGIN
  SELECT e.member_id INTO member FROM loyalty_ledger_entries e WHERE e.workspace_id = p_workspace AND e.id = p_debit_entry;
  IF NOT FOUND THEN RAISE EXCEPTION USING ERRCODE = 'P0002', MESSAGE = 'loyalty: no such debit'; END IF;
  card := loyalty_lock_card(p_workspace, member);
  SELECT coalesce(sum(dr.points - dr.refunded), 0) INTO wanted FROM loyalty_point_draws dr WHERE dr.entry_id = p_debit_entry;
  IF p_points IS NOT NULL THEN wanted := LEAST(wanted, p_points); END IF;
  IF wanted <= 0 THEN RETURN; END IF;
  IF card.points_balance + wanted > 9007199254740991 THEN PERFORM loyalty_out_of_range(); END IF;
  FOR d IN
    SELECT dr.bucket_id, dr.points - dr.refunded AS open, b.status, b.expires_at
      FROM loyalty_point_draws dr JOIN loyalty_point_buckets b ON b.id = dr.bucket_id
     WHERE dr.entry_id = p_debit_entry AND dr.points > dr.refunded
     ORDER BY b.expires_at DESC NULLS FIRST, b.created_at DESC, b.id DESC
     FOR UPDATE OF dr, b
  LOOP
    give := LEAST(d.open, wanted - refilled - lapsed);
    UPDATE loyalty_point_draws SET refunded = refunded + give WHERE entry_id = p_debit_entry AND bucket_id = d.bucket_id;
    IF d.status = 'ACTIVE' OR (d.status = 'CANCELED' AND (d.expires_at IS NULL OR d.expires_at > now())) THEN
      UPDATE loyalty_point_buckets SET remaining = remaining + give, status = 'ACTIVE' WHERE id = d.bucket_id;
      refilled := refilled + give;
    ELSE
      UPDATE loyalty_point_buckets SET expired = expired + give, status = 'EXPIRED' WHERE id = d.bucket_id;
      lapsed := lapsed + give;
    END IF;
    EXIT WHEN refilled + lapsed = wanted;
  END LOOP;
  balance := card.points_balance + refilled + lapsed;
  UPDATE vouchers SET points_balance = balance WHERE id = member;
  INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, balance_after, source_type, source_id, related_entry_id)
  VALUES (p_workspace, member, p_type, refilled + lapsed, balance, p_source_type, p_source_id, p_debit_entry)
  RETURNING id INTO entry;
  IF lapsed > 0 THEN
    balance := balance - lapsed;
    UPDATE vouchers SET points_balance = balance WHERE id = member;
    INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, balance_after, source_type, source_id, related_entry_id)
    VALUES (p_workspace, member, 'POINTS_EXPIRED', -lapsed, balance, 'expiry', p_source_id, p_debit_entry);
  END IF;
  -- A negative balance (ALLOW_NEGATIVE) is paid from what was refilled.
  debt := LEAST(GREATEST(-card.points_balance, 0), refilled);
  PERFORM loyalty_draw(p_workspace, member, debt, NULL);
  RETURN QUERY SELECT entry, balance, refilled + lapsed;
END $$;

-- Takes an earning back: a PENDING bucket is canceled (PENDING_CANCELED); an ACTIVE or EXPIRED one gives what it
-- still holds, and what of it was spent is taken from the card's other buckets (FIFO), down to 0 under TO_ZERO or
-- below under ALLOW_NEGATIVE (EARNING_REVERSED). Lifetime loses what the earning added. Once per earning: no row when
-- it was reversed already.
CREATE FUNCTION loyalty_reverse_earning(p_workspace uuid, p_earning uuid, p_mode text, p_source_type text, p_source_id text)
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
  counted bigint;
BEGIN
  SELECT * INTO earning FROM loyalty_earnings e WHERE e.workspace_id = p_workspace AND e.id = p_earning;
  IF NOT FOUND THEN RETURN; END IF;
  card := loyalty_lock_card(p_workspace, earning.member_id);
  UPDATE loyalty_earnings e SET reversed_at = now() WHERE e.id = p_earning AND e.reversed_at IS NULL;
  IF NOT FOUND THEN RETURN; END IF;
  SELECT * INTO b FROM loyalty_point_buckets WHERE id = earning.bucket_id FOR UPDATE;
  IF b.status = 'PENDING' THEN
    UPDATE loyalty_point_buckets SET status = 'CANCELED', remaining = 0 WHERE id = b.id;
    UPDATE vouchers SET points_pending = points_pending - b.remaining WHERE id = card.id;
    INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, pending_amount, balance_after, source_type,
      source_id, order_id, earning_rule_id, bucket_id)
    VALUES (p_workspace, card.id, 'PENDING_CANCELED', 0, -b.remaining, card.points_balance, p_source_type, p_source_id,
      earning.order_id::text, earning.earning_rule_id, b.id)
    RETURNING id INTO entry;
    RETURN QUERY SELECT entry, card.id, 0::bigint, b.remaining, card.points_balance;
    RETURN;
  END IF;
  held := CASE WHEN b.status = 'ACTIVE' THEN b.remaining ELSE 0 END;
  UPDATE loyalty_point_buckets SET remaining = 0, status = CASE WHEN status = 'ACTIVE' THEN 'CANCELED' ELSE status END WHERE id = b.id;
  shortfall := b.points - b.remaining - b.expired;
  INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, balance_after, source_type, source_id,
    order_id, earning_rule_id, bucket_id)
  VALUES (p_workspace, card.id, 'EARNING_REVERSED', 0, card.points_balance, p_source_type, p_source_id,
    earning.order_id::text, earning.earning_rule_id, b.id)
  RETURNING id INTO entry;
  drawn := loyalty_draw(p_workspace, card.id, LEAST(shortfall, GREATEST(card.points_balance - held, 0)), entry);
  taken := held + CASE WHEN p_mode = 'ALLOW_NEGATIVE' THEN shortfall ELSE drawn END;
  -- What the earning added to lifetime: all its points once active (pending points count when they activate).
  counted := b.points;
  UPDATE vouchers SET points_balance = points_balance - taken, points_lifetime = points_lifetime - counted WHERE id = card.id;
  UPDATE loyalty_ledger_entries SET amount = -taken, balance_after = card.points_balance - taken WHERE id = entry;
  RETURN QUERY SELECT entry, card.id, taken, 0::bigint, card.points_balance - taken;
END $$;

-- A pending bucket whose time has come becomes ACTIVE (PENDING_ACTIVATED; earned points count into lifetime now);
-- once per bucket, no row otherwise.
CREATE FUNCTION loyalty_activate_bucket(p_workspace uuid, p_bucket uuid)
RETURNS TABLE (entry_id uuid, member_id uuid, points bigint, balance_after bigint) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  member uuid;
  card vouchers;
  b loyalty_point_buckets;
  entry uuid;
BEGIN
  SELECT bk.member_id INTO member FROM loyalty_point_buckets bk WHERE bk.workspace_id = p_workspace AND bk.id = p_bucket;
  IF NOT FOUND THEN RETURN; END IF;
  card := loyalty_lock_card(p_workspace, member);
  SELECT * INTO b FROM loyalty_point_buckets bk WHERE bk.id = p_bucket AND bk.status = 'PENDING' AND bk.activates_at <= now() FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  IF card.points_balance + b.remaining > 9007199254740991 OR card.points_lifetime + b.remaining > 9007199254740991 THEN
    PERFORM loyalty_out_of_range();
  END IF;
  UPDATE loyalty_point_buckets SET status = 'ACTIVE' WHERE id = b.id;
  UPDATE vouchers SET points_pending = points_pending - b.remaining, points_balance = points_balance + b.remaining,
    points_lifetime = points_lifetime + CASE WHEN b.kind = 'POINTS_EARNED' THEN b.remaining ELSE 0 END WHERE id = member;
  PERFORM loyalty_draw(p_workspace, member, LEAST(GREATEST(-card.points_balance, 0), b.remaining), NULL);
  INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, pending_amount, balance_after, source_type,
    source_id, bucket_id, expires_at, activates_at)
  VALUES (p_workspace, member, 'PENDING_ACTIVATED', b.remaining, -b.remaining, card.points_balance + b.remaining, 'activation',
    NULL, b.id, b.expires_at, b.activates_at)
  RETURNING id INTO entry;
  RETURN QUERY SELECT entry, member, b.remaining, card.points_balance + b.remaining;
END $$;

-- An ACTIVE bucket past its expiry leaves the balance with what it holds (POINTS_EXPIRED when that is not 0); once
-- per bucket, no row otherwise.
CREATE FUNCTION loyalty_expire_bucket(p_workspace uuid, p_bucket uuid)
RETURNS TABLE (entry_id uuid, member_id uuid, points bigint, balance_after bigint) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  member uuid;
  card vouchers;
  b loyalty_point_buckets;
  entry uuid;
BEGIN
  SELECT bk.member_id INTO member FROM loyalty_point_buckets bk WHERE bk.workspace_id = p_workspace AND bk.id = p_bucket;
  IF NOT FOUND THEN RETURN; END IF;
  card := loyalty_lock_card(p_workspace, member);
  SELECT * INTO b FROM loyalty_point_buckets bk WHERE bk.id = p_bucket AND bk.status = 'ACTIVE' AND bk.expires_at <= now() FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  UPDATE loyalty_point_buckets SET status = 'EXPIRED', expired = expired + remaining, remaining = 0 WHERE id = b.id;
  IF b.remaining = 0 THEN
    RETURN QUERY SELECT NULL::uuid, member, 0::bigint, card.points_balance;
    RETURN;
  END IF;
  UPDATE vouchers SET points_balance = points_balance - b.remaining WHERE id = member;
  INSERT INTO loyalty_ledger_entries (workspace_id, member_id, type, amount, balance_after, source_type, bucket_id, expires_at)
  VALUES (p_workspace, member, 'POINTS_EXPIRED', -b.remaining, card.points_balance - b.remaining, 'expiry', b.id, b.expires_at)
  RETURNING id INTO entry;
  RETURN QUERY SELECT entry, member, b.remaining, card.points_balance - b.remaining;
END $$;

-- An earning by a rule: its grant (POINTS_EARNED, pending when p_activates_at is ahead) and its once-only key in one
-- call; a key used before raises UNIQUE_VIOLATION, rolling the whole reaction back.
CREATE FUNCTION loyalty_earn(
  p_workspace uuid, p_member uuid, p_points bigint, p_activates_at timestamptz, p_expires_at timestamptz, p_source_type text,
  p_source_id text, p_order_id uuid, p_rule_id uuid, p_reaction_key text
) RETURNS TABLE (entry_id uuid, bucket_id uuid, balance_after bigint, pending boolean) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  g record;
BEGIN
  SELECT * INTO g FROM loyalty_grant(p_workspace, p_member, p_points, 'POINTS_EARNED', p_activates_at, p_expires_at, p_source_type,
    p_source_id, p_order_id::text, p_rule_id, NULL);
  INSERT INTO loyalty_earnings (workspace_id, earning_rule_id, member_id, reaction_key, order_id, bucket_id, points)
  VALUES (p_workspace, p_rule_id, p_member, p_reaction_key, p_order_id, g.bucket_id, p_points);
  RETURN QUERY SELECT g.entry_id, g.bucket_id, g.balance_after, g.pending;
END $$;
