-- Bulk generation writes a million vouchers at a time, nearly all without validation rules of their own: the GIN index
-- on vouchers.validation_rule_ids took an entry for every empty array. Only vouchers that list rules are indexed now;
-- the one query that reads the index (which campaigns and vouchers use a rule) repeats the predicate.
DROP INDEX IF EXISTS vouchers_by_validation_rule;
CREATE INDEX vouchers_by_validation_rule ON vouchers USING gin (validation_rule_ids) WHERE validation_rule_ids <> '{}';
