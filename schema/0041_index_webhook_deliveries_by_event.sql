-- An event's deliveries by its id: the event retention asks whether any is still unfinished, and deleting an event
-- cascades to its deliveries, which without this index scans the whole table once per event deleted. Not built
-- CONCURRENTLY: that waits for every other transaction, among them the start-ups queued on the migration lock.
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);
