-- Pay with points without updating each redemption afterwards. The engine's batch debited a card's payments with
-- loyalty_debit_many and then set each new redemption's points and entry id with an UPDATE: a second version of every
-- redemption row of the batch (and, off its page, of each of its five indexes). loyalty_debit_many_as is the same
-- debit with the entries' ids given by the caller, who writes them into the redemption rows as it inserts them;
-- loyalty_debit_many keeps its signature and makes the ids itself.

-- k debits of one card with the given entry ids, in order: as loyalty_debit_many (schema/0036) did.
CREATE FUNCTION loyalty_debit_many_as(
  p_workspace uuid, p_member uuid, p_entry_ids uuid[], p_points bigint[], p_type text, p_source_type text,
  p_source_ids text[], p_order_ids text[], p_reason text
) RETURNS TABLE (n integer, entry_id uuid, balance_after bigint) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  k integer := coalesce(cardinality(p_points), 0);
  total bigint;
  before bigint;
  ids uuid[];
  b record;
  available bigint;
  taken bigint;
  take bigint;
  i integer := 1;
  need bigint;
  draw_entries uuid[] := '{}';
  draw_buckets uuid[] := '{}';
  draw_points bigint[] := '{}';
BEGIN
  IF k = 0 THEN RETURN; END IF;
  IF coalesce(cardinality(p_entry_ids), 0) <> k OR EXISTS (SELECT 1 FROM unnest(p_entry_ids) AS e WHERE e IS NULL) THEN
    RAISE EXCEPTION 'loyalty_debit: one entry id per amount';
  END IF;
  IF EXISTS (SELECT 1 FROM unnest(p_points) AS p WHERE p IS NULL OR p <= 0) THEN
    RAISE EXCEPTION 'loyalty_debit: points must be positive';
  END IF;
  SELECT sum(p) INTO total FROM unnest(p_points) AS p;
  IF total > 9007199254740991 THEN RETURN; END IF;
  PERFORM loyalty_lock_card(p_workspace, p_member);
  UPDATE vouchers SET points_balance = points_balance - total
   WHERE id = p_member AND points_balance >= total
  RETURNING points_balance + total INTO before;
  IF NOT FOUND THEN RETURN; END IF;
  ids := p_entry_ids;
  INSERT INTO loyalty_ledger_entries (workspace_id, id, member_id, type, amount, balance_after, source_type, source_id, order_id, reason)
  SELECT p_workspace, ids[x.n], p_member, p_type, -x.p, (before - sum(x.p) OVER (ORDER BY x.n))::bigint, p_source_type, p_source_ids[x.n],
         p_order_ids[x.n], p_reason
    FROM unnest(p_points) WITH ORDINALITY AS x(p, n)
   ORDER BY x.n;
  need := p_points[1];
  -- The buckets in loyalty_draw's order (schema/0018: soonest expiry first); that function draws for one entry, this
  -- loop for k entries in turn with one update per bucket. A change of the order belongs in both.
  FOR b IN
    SELECT id, remaining FROM loyalty_point_buckets
     WHERE member_id = p_member AND status = 'ACTIVE' AND remaining > 0
     ORDER BY expires_at ASC NULLS LAST, created_at, id
     FOR UPDATE
  LOOP
    available := b.remaining;
    taken := 0;
    WHILE i <= k AND available > 0 LOOP
      take := LEAST(available, need);
      draw_entries := draw_entries || ids[i];
      draw_buckets := draw_buckets || b.id;
      draw_points := draw_points || take;
      available := available - take;
      taken := taken + take;
      need := need - take;
      IF need = 0 THEN
        i := i + 1;
        IF i <= k THEN need := p_points[i]; END IF;
      END IF;
    END LOOP;
    UPDATE loyalty_point_buckets SET remaining = remaining - taken WHERE id = b.id;
    EXIT WHEN i > k;
  END LOOP;
  IF i <= k THEN
    RAISE EXCEPTION 'loyalty_debit: the buckets of % do not hold a balance of %', p_member, before;
  END IF;
  INSERT INTO loyalty_point_draws (workspace_id, entry_id, bucket_id, points)
  SELECT p_workspace, e, bk, pt FROM unnest(draw_entries, draw_buckets, draw_points) AS d(e, bk, pt);
  RETURN QUERY
    SELECT x.n::integer, ids[x.n], (before - sum(x.p) OVER (ORDER BY x.n))::bigint
      FROM unnest(p_points) WITH ORDINALITY AS x(p, n)
     ORDER BY x.n;
END $$;

CREATE OR REPLACE FUNCTION loyalty_debit_many(
  p_workspace uuid, p_member uuid, p_points bigint[], p_type text, p_source_type text, p_source_ids text[],
  p_order_ids text[], p_reason text
) RETURNS TABLE (n integer, entry_id uuid, balance_after bigint) LANGUAGE sql AS $$
  SELECT d.n, d.entry_id, d.balance_after
    FROM loyalty_debit_many_as(p_workspace, p_member,
                               ARRAY(SELECT gen_random_uuid() FROM generate_series(1, coalesce(cardinality(p_points), 0))),
                               p_points, p_type, p_source_type, p_source_ids, p_order_ids, p_reason) AS d
$$;
