// The database side of scale-out (docs/scale-out-database.md), as data: where every table of schema/ goes on a
// Citus-style distributed PostgreSQL, and the constraints that break its rules today, each with what has to change.
// distribution-keys.test.ts holds the catalog to this plan.

export const DISTRIBUTION_COLUMN = 'workspace_id';

/** Hash-distributed by workspace_id, all in one co-location group: a workspace's rows share one shard group. */
export const DISTRIBUTED = [
  // the redemption hot path (one engine batch statement writes these together)
  'vouchers', 'campaigns', 'redemptions', 'redemption_rollbacks', 'gift_ledger_entries',
  'voucher_sessions', 'idempotency_keys', 'campaign_budget_usage', 'events', 'redemption_rollups', 'refusal_counts',
  'validation_rules', 'customers', 'orders', 'order_returns', 'order_return_rollups', 'referral_conversions', 'referral_outcomes', 'referral_event_inbox',
  // loyalty (pay with points runs in the engine's transaction)
  'loyalty_tiers', 'loyalty_earning_rules', 'loyalty_point_buckets', 'loyalty_ledger_entries', 'loyalty_point_draws',
  'loyalty_earnings', 'loyalty_event_inbox', 'custom_events', 'loyalty_point_rollups',
  // the currency migration's record of what it changed (schema/0029)
  'voucher_currency_backfills',
  // the rest of a workspace's data
  'segments', 'segment_members', 'publications', 'audit_entries', 'imports', 'webhook_endpoints', 'webhook_deliveries',
  'webhook_delivery_attempts', 'reward_types', 'rewards', 'loyalty_program_rewards', 'loyalty_program_reward_prices',
  'reward_codes', 'reward_redemptions',
] as const;

/**
 * Small, read on every request or looked up without a workspace: one copy on every node. partition_leases too: the
 * engine's batch statement locks its lease rows beside the writes it fences, on whichever node holds the workspace.
 */
export const REFERENCE = ['workspaces', 'api_keys', 'staff_users', 'staff_sessions', 'staff_invitations', 'partition_leases'] as const;

/** On the coordinator only: they describe processes and the schema, not a workspace (pg-boss's own schema too). */
export const LOCAL = ['schema_migrations', 'worker_heartbeats', 'engine_members', 'engine_secret'] as const;

export type Placement = 'distributed' | 'reference' | 'local';

export function placementOf(table: string): Placement | undefined {
  if ((DISTRIBUTED as readonly string[]).includes(table)) return 'distributed';
  if ((REFERENCE as readonly string[]).includes(table)) return 'reference';
  if ((LOCAL as readonly string[]).includes(table)) return 'local';
  return undefined;
}

export type Rule =
  /** A distributed table must have workspace_id, NOT NULL. */
  | 'distribution-column'
  /** Every primary key, unique constraint and unique index of a distributed table includes workspace_id. */
  | 'unique-key'
  /** A foreign key between distributed tables pairs workspace_id with workspace_id. */
  | 'foreign-key'
  /** Reference and local tables have no foreign key to a distributed table. */
  | 'reference-to-distributed'
  /** Distributed tables have no foreign key to a local table. */
  | 'distributed-to-local';

/**
 * References the engine and the queries rely on without a FOREIGN KEY (the hot path's appended rows have none, see
 * schema/0006): the co-location test checks them like foreign keys. [child table, column, parent table, column].
 */
export const IMPLIED_REFERENCES: ReadonlyArray<readonly [string, string, string, string]> = [
  ['redemptions', 'voucher_id', 'vouchers', 'id'],
  ['redemptions', 'campaign_id', 'campaigns', 'id'],
  ['redemptions', 'customer_id', 'customers', 'id'],
  ['redemptions', 'stack_id', 'redemptions', 'stack_id'],
  ['gift_ledger_entries', 'redemption_id', 'redemptions', 'id'],
  ['redemption_rollups', 'campaign_id', 'campaigns', 'id'],
  ['refusal_counts', 'campaign_id', 'campaigns', 'id'],
  ['referral_conversions', 'redemption_id', 'redemptions', 'id'],
  ['referral_conversions', 'voucher_id', 'vouchers', 'id'],
  ['vouchers', 'customer_id', 'customers', 'id'],
];

export interface KnownException {
  rule: Rule;
  table: string;
  constraint: string;
  /** Why it breaks the rule today and what the migration to distribution changes. */
  reason: string;
}

const PK_BY_ID = 'a single-column uuid primary key: becomes PRIMARY KEY (workspace_id, id)';
const FK_BY_ID = 'refers to its parent by id alone: becomes (workspace_id, <column>) REFERENCES <parent> (workspace_id, id)';

/** Tables whose only break of the unique rule is `<table>_pkey` on (id). */
const KEYED_BY_ID = [
  'audit_entries', 'campaigns', 'custom_events', 'customers', 'events', 'gift_ledger_entries', 'imports',
  'loyalty_earning_rules', 'loyalty_earnings', 'loyalty_ledger_entries', 'loyalty_point_buckets', 'loyalty_program_rewards',
  'loyalty_tiers', 'order_returns', 'orders', 'publications', 'redemption_rollbacks', 'redemptions', 'referral_conversions', 'reward_codes',
  'reward_redemptions', 'reward_types', 'rewards', 'segments', 'validation_rules', 'vouchers', 'webhook_deliveries',
  'webhook_delivery_attempts', 'webhook_endpoints',
];

const unique = (table: string, constraint: string, reason: string): KnownException => ({ rule: 'unique-key', table, constraint, reason });
const foreignKey = (table: string, constraint: string, reason = FK_BY_ID): KnownException => ({ rule: 'foreign-key', table, constraint, reason });

export const KNOWN_EXCEPTIONS: readonly KnownException[] = [
  ...KEYED_BY_ID.map((table) => unique(table, `${table}_pkey`, PK_BY_ID)),
  // Composite keys without workspace_id: each gains it as its first column, and so does every ON CONFLICT target on it.
  unique('campaign_budget_usage', 'campaign_budget_usage_pkey',
    '(campaign_id, period): the engine upserts on it (commit-guarded-parts.sql.ts ON CONFLICT (campaign_id, period)); becomes (workspace_id, campaign_id, period)'),
  unique('voucher_sessions', 'voucher_sessions_pkey',
    '(voucher_id, key): reservations, upserted by the engine (commit-guarded-parts.sql.ts); becomes (workspace_id, voucher_id, key)'),
  unique('redemption_rollbacks', 'redemption_rollbacks_redemption_id_key',
    '(redemption_id): one rollback per redemption; becomes UNIQUE (workspace_id, redemption_id)'),
  unique('loyalty_event_inbox', 'loyalty_event_inbox_pkey',
    '(event_id): filled by the events trigger with ON CONFLICT DO NOTHING (schema/0017); becomes (workspace_id, event_id)'),
  unique('referral_event_inbox', 'referral_event_inbox_pkey',
    '(event_id): filled by the events trigger with ON CONFLICT DO NOTHING (schema/0031); becomes (workspace_id, event_id)'),
  unique('loyalty_earnings', 'loyalty_earnings_once',
    '(earning_rule_id, reaction_key): the once-per-reaction guard of loyalty_earn (schema/0018); becomes (workspace_id, earning_rule_id, reaction_key)'),
  unique('loyalty_point_draws', 'loyalty_point_draws_pkey', '(entry_id, bucket_id); becomes (workspace_id, entry_id, bucket_id)'),
  unique('loyalty_program_reward_prices', 'loyalty_program_reward_prices_pkey', '(offer_id, tier_id); becomes (workspace_id, offer_id, tier_id)'),
  unique('loyalty_program_rewards', 'loyalty_program_rewards_unique',
    '(program_id, reward_id): target of ON CONSTRAINT in reward.queries.ts; becomes (workspace_id, program_id, reward_id)'),
  unique('loyalty_tiers', 'loyalty_tiers_min_points_unique', '(program_id, min_points); becomes (workspace_id, program_id, min_points)'),
  unique('publications', 'publications_voucher_unique', '(voucher_id): a code is published once; becomes (workspace_id, voucher_id)'),
  unique('referral_outcomes', 'referral_outcomes_pkey',
    '(conversion_id, side, reward_id): no surrogate id; becomes (workspace_id, conversion_id, side, reward_id)'),
  unique('reward_codes', 'reward_codes_unique',
    '(reward_id, code): target of ON CONSTRAINT in reward-issue.queries.ts; becomes (workspace_id, reward_id, code)'),
  unique('segment_members', 'segment_members_pkey', '(segment_id, customer_id); becomes (workspace_id, segment_id, customer_id)'),
  unique('vouchers', 'vouchers_loyalty_member',
    'partial (campaign_id, customer_id): one card per customer and program, ON CONFLICT target in member.queries.ts; becomes (workspace_id, campaign_id, customer_id)'),
  unique('webhook_deliveries', 'webhook_deliveries_one_per_event',
    '(endpoint_id, event_id): ON CONFLICT target of dispatchEvents and of event replays; becomes (workspace_id, endpoint_id, event_id)'),
  unique('webhook_delivery_attempts', 'webhook_delivery_attempts_number_unique',
    '(delivery_id, number); becomes (workspace_id, delivery_id, number)'),

  // Foreign keys between distributed tables by id alone (they need the composite parent keys above first).
  foreignKey('vouchers', 'vouchers_campaign_id_fkey'),
  foreignKey('vouchers', 'vouchers_loyalty_tier_fk', `${FK_BY_ID}; ON DELETE SET NULL must then name loyalty_tier_id only (PostgreSQL 15 column list), not workspace_id`),
  foreignKey('gift_ledger_entries', 'gift_ledger_entries_voucher_id_fkey'),
  foreignKey('voucher_sessions', 'voucher_sessions_voucher_id_fkey'),
  foreignKey('redemption_rollbacks', 'redemption_rollbacks_redemption_id_fkey'),
  foreignKey('campaign_budget_usage', 'campaign_budget_usage_campaign_id_fkey'),
  foreignKey('order_returns', 'order_returns_order_id_fkey'),
  foreignKey('orders', 'orders_customer_id_fkey', `${FK_BY_ID}; ON DELETE SET NULL must then name customer_id only`),
  foreignKey('publications', 'publications_campaign_id_fkey'),
  foreignKey('publications', 'publications_customer_id_fkey'),
  foreignKey('publications', 'publications_voucher_id_fkey'),
  foreignKey('segment_members', 'segment_members_customer_id_fkey'),
  foreignKey('segment_members', 'segment_members_segment_id_fkey'),
  foreignKey('loyalty_tiers', 'loyalty_tiers_program_id_fkey'),
  foreignKey('loyalty_earning_rules', 'loyalty_earning_rules_program_id_fkey'),
  foreignKey('loyalty_point_buckets', 'loyalty_point_buckets_member_id_fkey'),
  foreignKey('loyalty_ledger_entries', 'loyalty_ledger_entries_member_id_fkey'),
  foreignKey('loyalty_point_draws', 'loyalty_point_draws_bucket_id_fkey'),
  foreignKey('loyalty_point_draws', 'loyalty_point_draws_entry_id_fkey'),
  foreignKey('loyalty_earnings', 'loyalty_earnings_bucket_id_fkey'),
  foreignKey('loyalty_earnings', 'loyalty_earnings_member_id_fkey'),
  foreignKey('loyalty_program_rewards', 'loyalty_program_rewards_program_id_fkey'),
  foreignKey('loyalty_program_rewards', 'loyalty_program_rewards_reward_id_fkey'),
  foreignKey('loyalty_program_reward_prices', 'loyalty_program_reward_prices_offer_id_fkey'),
  foreignKey('loyalty_program_reward_prices', 'loyalty_program_reward_prices_tier_id_fkey'),
  foreignKey('rewards', 'rewards_reward_type_id_fkey'),
  foreignKey('reward_codes', 'reward_codes_reward_id_fkey'),
  foreignKey('reward_redemptions', 'reward_redemptions_member_id_fkey'),
  foreignKey('reward_redemptions', 'reward_redemptions_reward_id_fkey'),
  foreignKey('referral_outcomes', 'referral_outcomes_conversion_id_fkey'),
  foreignKey('webhook_deliveries', 'webhook_deliveries_endpoint_id_fkey'),
  foreignKey('webhook_deliveries', 'webhook_deliveries_event_id_fkey'),
  foreignKey('webhook_delivery_attempts', 'webhook_delivery_attempts_delivery_id_fkey'),
];
