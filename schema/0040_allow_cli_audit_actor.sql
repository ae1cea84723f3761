-- The admin CLI acts through the operation pipeline as an actor of its own kind (`cli`, named by its OS user), so its
-- audit entries say who made the change at the command line.
ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_actor_type_check;
ALTER TABLE audit_entries ADD CONSTRAINT audit_entries_actor_type_check CHECK (actor_type IN ('api_key', 'staff_user', 'system', 'cli'));
