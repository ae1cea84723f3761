-- Every process hears at once of a rule or time-zone change made in another one: its partitions re-read the
-- workspace's vouchers before their next decision (rules are not guarded in SQL like counters and settings are).
-- NOTIFY is sent at commit; only these rare writes pay for it, never the engine's commits.
CREATE FUNCTION notify_rules_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('rules_changed', OLD.workspace_id::text);
  ELSE
    PERFORM pg_notify('rules_changed', NEW.workspace_id::text);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER validation_rules_notify AFTER INSERT OR UPDATE OR DELETE ON validation_rules
  FOR EACH ROW EXECUTE FUNCTION notify_rules_changed();
CREATE TRIGGER workspaces_time_zone_notify AFTER UPDATE OF time_zone ON workspaces
  FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone) EXECUTE FUNCTION notify_rules_changed();
