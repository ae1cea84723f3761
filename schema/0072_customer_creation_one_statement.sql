-- A checkout's new customers are created in one statement of their own (insert, customer.created), without the
-- transaction around it, when their workspace has no AUTO segment: the common case, and then nothing more is needed.
-- The statement must still agree with a segment computation running meanwhile (which holds the segment-membership
-- lock exclusively): this function takes that lock shared, and only then looks for AUTO segments. Being VOLATILE, its
-- query sees what committed before the lock was granted (a fresh snapshot), not the calling statement's snapshot, so
-- a segment whose computation ran while the statement waited is seen. Should there be one, it raises and the whole
-- statement is undone (the caller then creates those customers in a transaction that evaluates the segments).
CREATE FUNCTION segment_membership_without_auto(ws uuid) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('segment-membership:' || ws::text, 0));
  IF EXISTS (SELECT 1 FROM segments WHERE workspace_id = ws AND type = 'AUTO') THEN
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'segment membership: AUTO segments';
  END IF;
  RETURN true;
END $$;

-- A flash sale creates customers as fast as it redeems: customers joins the tables of the redemption path that carry
-- workspace_id without a foreign key to workspaces (see 0006): the key share-locked the workspace row at every insert,
-- and two creations of one workspace overlapping made a MultiXact of that one row. Workspaces are never deleted
-- through the API.
ALTER TABLE customers DROP CONSTRAINT customers_workspace_id_fkey;
