// SQL of the rewards catalog: rewards, reward types, program offers and reward redemptions. Parameterized, one row
// mapper each.
import type { CursorCodec } from '../../platform/cursor.js';
import type { Sql } from '../../platform/database.js';
import { keysetPage, type PageRequest } from '../../platform/pagination.js';
import type { AttributesSchema, CreateRewardBody, CreateRewardTypeBody, OfferRewardBody, ProgramReward, Reward, RewardRedemption, RewardType, UpdateRewardBody } from './reward.schemas.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

// ---- reward types ----------------------------------------------------------------------------------------------------

const TYPE_COLUMNS = 'id, key, name, attributes_schema, fulfillment, created_at, updated_at';

interface TypeRow {
  [column: string]: unknown;
  id: string;
  key: string;
  name: string;
  attributes_schema: AttributesSchema;
  fulfillment: RewardType['fulfillment'];
  created_at: Date;
  updated_at: Date;
}

const toType = (r: TypeRow): RewardType => ({
  id: r.id,
  key: r.key,
  name: r.name,
  attributesSchema: r.attributes_schema,
  fulfillment: r.fulfillment,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** undefined when the key is taken in the workspace. */
export async function insertRewardType(tx: Sql, workspaceId: string, body: CreateRewardTypeBody): Promise<RewardType | undefined> {
  const { rows } = await tx.query<TypeRow>(
    `INSERT INTO reward_types (workspace_id, key, name, attributes_schema, fulfillment) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT ON CONSTRAINT reward_types_key_unique DO NOTHING RETURNING ${TYPE_COLUMNS}`,
    [workspaceId, body.key, body.name, body.attributesSchema, body.fulfillment],
  );
  return rows[0] && toType(rows[0]);
}

export async function findRewardType(db: Sql, workspaceId: string, id: string): Promise<RewardType | undefined> {
  const { rows } = await db.query<TypeRow>(`SELECT ${TYPE_COLUMNS} FROM reward_types WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0] && toType(rows[0]);
}

export function listRewardTypes(db: Sql, cursors: CursorCodec, workspaceId: string, request: PageRequest) {
  return keysetPage<TypeRow, RewardType>(db, cursors, { list: 'rewardTypes.list', from: 'reward_types', columns: TYPE_COLUMNS, where: ['workspace_id = $1'], params: [workspaceId], map: toType }, request);
}

/** false when a reward still uses the type. */
export async function deleteRewardType(tx: Sql, workspaceId: string, id: string): Promise<'deleted' | 'missing' | 'in_use'> {
  const used = await tx.query('SELECT 1 FROM rewards WHERE workspace_id = $1 AND reward_type_id = $2 LIMIT 1', [workspaceId, id]);
  if (used.rowCount) return 'in_use';
  const { rowCount } = await tx.query('DELETE FROM reward_types WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return rowCount ? 'deleted' : 'missing';
}

// ---- rewards ---------------------------------------------------------------------------------------------------------

const REWARD_COLUMNS =
  'id, name, type, campaign_id, amount, reward_type_id, attributes, stock, redeemed, limit_per_member, code_pool, active, start_date, expiration_date, metadata, created_at, updated_at';

interface RewardRow {
  [column: string]: unknown;
  id: string;
  name: string;
  type: Reward['type'];
  campaign_id: string | null;
  amount: number | null;
  reward_type_id: string | null;
  attributes: Reward['attributes'];
  stock: number | null;
  redeemed: number;
  limit_per_member: number | null;
  code_pool: boolean;
  active: boolean;
  start_date: Date | null;
  expiration_date: Date | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export const toReward = (r: RewardRow): Reward => ({
  id: r.id,
  name: r.name,
  type: r.type,
  ...(r.campaign_id ? { campaignId: r.campaign_id } : {}),
  ...(r.amount !== null ? { amount: r.amount } : {}),
  ...(r.reward_type_id ? { rewardTypeId: r.reward_type_id } : {}),
  attributes: r.attributes,
  stock: r.stock,
  redeemed: r.redeemed,
  limitPerMember: r.limit_per_member,
  codePool: r.code_pool,
  active: r.active,
  startDate: iso(r.start_date),
  expirationDate: iso(r.expiration_date),
  metadata: r.metadata,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export async function insertReward(tx: Sql, workspaceId: string, body: CreateRewardBody): Promise<Reward> {
  const { rows } = await tx.query<RewardRow>(
    `INSERT INTO rewards (workspace_id, name, type, campaign_id, amount, reward_type_id, attributes, stock, limit_per_member, active, start_date,
                          expiration_date, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING ${REWARD_COLUMNS}`,
    [
      workspaceId,
      body.name,
      body.type,
      body.campaignId ?? null,
      body.amount ?? null,
      body.rewardTypeId ?? null,
      body.attributes ?? {},
      body.stock ?? null,
      body.limitPerMember ?? null,
      body.active,
      body.startDate ?? null,
      body.expirationDate ?? null,
      body.metadata,
    ],
  );
  return toReward(rows[0]!);
}

export async function findReward(db: Sql, workspaceId: string, id: string, options: { lock?: boolean } = {}): Promise<Reward | undefined> {
  const { rows } = await db.query<RewardRow>(
    `SELECT ${REWARD_COLUMNS} FROM rewards WHERE workspace_id = $1 AND id = $2${options.lock ? ' FOR UPDATE' : ''}`,
    [workspaceId, id],
  );
  return rows[0] && toReward(rows[0]);
}

export function listRewards(db: Sql, cursors: CursorCodec, workspaceId: string, request: PageRequest) {
  return keysetPage<RewardRow, Reward>(db, cursors, { list: 'rewards.list', from: 'rewards', columns: REWARD_COLUMNS, where: ['workspace_id = $1'], params: [workspaceId], map: toReward }, request);
}

/** The reward after the patch; fields left out keep their value (null clears a nullable one). */
export async function updateReward(tx: Sql, workspaceId: string, id: string, patch: UpdateRewardBody): Promise<Reward | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [workspaceId, id];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (patch.name !== undefined) set('name', patch.name);
  if (patch.attributes !== undefined) set('attributes', patch.attributes);
  if (patch.stock !== undefined) set('stock', patch.stock);
  if (patch.limitPerMember !== undefined) set('limit_per_member', patch.limitPerMember);
  if (patch.active !== undefined) set('active', patch.active);
  if (patch.startDate !== undefined) set('start_date', patch.startDate);
  if (patch.expirationDate !== undefined) set('expiration_date', patch.expirationDate);
  if (patch.metadata !== undefined) set('metadata', patch.metadata);
  const { rows } = await tx.query<RewardRow>(
    `UPDATE rewards SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE workspace_id = $1 AND id = $2 RETURNING ${REWARD_COLUMNS}`,
    params,
  );
  return rows[0] && toReward(rows[0]);
}

export async function deleteReward(tx: Sql, workspaceId: string, id: string): Promise<'deleted' | 'missing' | 'in_use'> {
  const used = await tx.query('SELECT 1 FROM reward_redemptions WHERE workspace_id = $1 AND reward_id = $2 LIMIT 1', [workspaceId, id]);
  if (used.rowCount) return 'in_use';
  const { rowCount } = await tx.query('DELETE FROM rewards WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return rowCount ? 'deleted' : 'missing';
}

/** Takes one unit of stock (none to take from an unlimited reward); false when none is left. */
export async function takeStock(tx: Sql, rewardId: string): Promise<boolean> {
  const { rowCount } = await tx.query('UPDATE rewards SET stock = CASE WHEN stock IS NULL THEN NULL ELSE stock - 1 END, redeemed = redeemed + 1 WHERE id = $1 AND (stock IS NULL OR stock > 0)', [rewardId]);
  return rowCount === 1;
}

/** The unit back in stock, except for a pool's code: the member has seen it, so it is voided, never handed out again. */
export async function giveBackStock(tx: Sql, rewardId: string): Promise<void> {
  await tx.query(
    'UPDATE rewards SET stock = CASE WHEN stock IS NULL OR code_pool THEN stock ELSE stock + 1 END, redeemed = greatest(redeemed - 1, 0) WHERE id = $1',
    [rewardId],
  );
}

// ---- program offers --------------------------------------------------------------------------------------------------

const OFFER_FROM = `(SELECT o.workspace_id, o.id, o.program_id, o.reward_id, o.points, o.created_at, row_to_json(r) AS reward,
                            (SELECT coalesce(json_agg(json_build_object('tierId', p.tier_id, 'points', p.points) ORDER BY p.points, p.tier_id), '[]')
                               FROM loyalty_program_reward_prices p WHERE p.offer_id = o.id) AS tier_prices
                       FROM loyalty_program_rewards o JOIN rewards r ON r.id = o.reward_id) AS o`;
const OFFER_COLUMNS = 'id, program_id, reward_id, points, created_at, reward, tier_prices';

interface OfferRow {
  [column: string]: unknown;
  id: string;
  program_id: string;
  reward_id: string;
  points: number;
  created_at: Date;
  reward: Record<string, unknown>;
  tier_prices: ProgramReward['tierPrices'];
}

function toOffer(r: OfferRow): ProgramReward {
  const raw = r.reward;
  const date = (v: unknown) => (v ? new Date(v as string) : null);
  const reward = toReward({ ...(raw as RewardRow), start_date: date(raw.start_date), expiration_date: date(raw.expiration_date), created_at: new Date(raw.created_at as string), updated_at: new Date(raw.updated_at as string) });
  const tierPrices = r.tier_prices.map((p) => ({ tierId: p.tierId, points: Number(p.points) }));
  return { id: r.id, programId: r.program_id, rewardId: r.reward_id, points: Number(r.points), tierPrices, reward, createdAt: r.created_at.toISOString() };
}

/** Offers (or reprices) a reward in a program; its tier prices are replaced by those given. */
export async function upsertOffer(tx: Sql, workspaceId: string, programId: string, body: OfferRewardBody): Promise<ProgramReward> {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO loyalty_program_rewards (workspace_id, program_id, reward_id, points) VALUES ($1, $2, $3, $4)
     ON CONFLICT ON CONSTRAINT loyalty_program_rewards_unique DO UPDATE SET points = EXCLUDED.points RETURNING id`,
    [workspaceId, programId, body.rewardId, body.points],
  );
  const offerId = rows[0]!.id;
  await tx.query('DELETE FROM loyalty_program_reward_prices WHERE offer_id = $1', [offerId]);
  await tx.query(
    `INSERT INTO loyalty_program_reward_prices (workspace_id, offer_id, tier_id, points)
     SELECT $1, $2, t, p FROM unnest($3::uuid[], $4::bigint[]) AS u(t, p)`,
    [workspaceId, offerId, body.tierPrices.map((p) => p.tierId), body.tierPrices.map((p) => p.points)],
  );
  return (await findOffer(tx, workspaceId, programId, body.rewardId, offerId))!;
}

/** The ids among `tierIds` that are not tiers of the program. */
export async function foreignTiers(db: Sql, workspaceId: string, programId: string, tierIds: string[]): Promise<string[]> {
  const { rows } = await db.query<{ t: string }>(
    `SELECT t FROM unnest($3::uuid[]) AS t WHERE NOT EXISTS (SELECT 1 FROM loyalty_tiers WHERE workspace_id = $1 AND program_id = $2 AND id = t)`,
    [workspaceId, programId, tierIds],
  );
  return rows.map((r) => r.t);
}

export async function findOffer(db: Sql, workspaceId: string, programId: string, rewardId: string, id?: string): Promise<ProgramReward | undefined> {
  const { rows } = await db.query<OfferRow>(
    `SELECT ${OFFER_COLUMNS} FROM ${OFFER_FROM} WHERE workspace_id = $1 AND program_id = $2 AND reward_id = $3${id ? ' AND id = $4' : ''}`,
    id ? [workspaceId, programId, rewardId, id] : [workspaceId, programId, rewardId],
  );
  return rows[0] && toOffer(rows[0]);
}

export function listOffers(db: Sql, cursors: CursorCodec, workspaceId: string, programId: string, request: PageRequest) {
  return keysetPage<OfferRow, ProgramReward>(
    db,
    cursors,
    { list: 'loyalty.programRewards', from: OFFER_FROM, columns: OFFER_COLUMNS, where: ['workspace_id = $1', 'program_id = $2'], params: [workspaceId, programId], map: toOffer },
    request,
  );
}

export async function deleteOffer(tx: Sql, workspaceId: string, programId: string, rewardId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM loyalty_program_rewards WHERE workspace_id = $1 AND program_id = $2 AND reward_id = $3', [workspaceId, programId, rewardId]);
  return (rowCount ?? 0) > 0;
}

// ---- reward redemptions ----------------------------------------------------------------------------------------------

export interface StoredRewardRedemption {
  id: string;
  memberId: string;
  customerId: string;
  rewardId: string;
  programId: string;
  points: number;
  debitEntryId: string;
  status: RewardRedemption['status'];
  issued: IssuedRecord | null;
  createdAt: Date;
}

/** What was issued, as stored: the ids needed to take it back. */
export interface IssuedRecord {
  voucherId?: string;
  voucherCode?: string;
  amount?: number;
  memberId?: string;
  points?: number;
  entryId?: string;
  /** A code of the reward's pool. */
  code?: string;
  codeId?: string;
}

const REDEMPTION_COLUMNS = 'id, member_id, customer_id, reward_id, program_id, points, debit_entry_id, status, issued, created_at';

interface RedemptionRow {
  [column: string]: unknown;
  id: string;
  member_id: string;
  customer_id: string;
  reward_id: string;
  program_id: string;
  points: number;
  debit_entry_id: string;
  status: RewardRedemption['status'];
  issued: IssuedRecord | null;
  created_at: Date;
}

const toStored = (r: RedemptionRow): StoredRewardRedemption => ({
  id: r.id,
  memberId: r.member_id,
  customerId: r.customer_id,
  rewardId: r.reward_id,
  programId: r.program_id,
  points: Number(r.points),
  debitEntryId: r.debit_entry_id,
  status: r.status,
  issued: r.issued,
  createdAt: r.created_at,
});

export async function insertRewardRedemption(tx: Sql, workspaceId: string, r: Omit<StoredRewardRedemption, 'createdAt'>): Promise<StoredRewardRedemption> {
  const { rows } = await tx.query<RedemptionRow>(
    `INSERT INTO reward_redemptions (workspace_id, id, member_id, customer_id, reward_id, program_id, points, debit_entry_id, status, issued)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${REDEMPTION_COLUMNS}`,
    [workspaceId, r.id, r.memberId, r.customerId, r.rewardId, r.programId, r.points, r.debitEntryId, r.status, r.issued],
  );
  return toStored(rows[0]!);
}

export async function lockRewardRedemption(tx: Sql, workspaceId: string, id: string): Promise<StoredRewardRedemption | undefined> {
  const { rows } = await tx.query<RedemptionRow>(`SELECT ${REDEMPTION_COLUMNS} FROM reward_redemptions WHERE workspace_id = $1 AND id = $2 FOR UPDATE`, [workspaceId, id]);
  return rows[0] && toStored(rows[0]);
}

export async function setRewardRedemptionStatus(tx: Sql, id: string, status: RewardRedemption['status']): Promise<void> {
  await tx.query('UPDATE reward_redemptions SET status = $2, updated_at = now() WHERE id = $1', [id, status]);
}

/** A member's redemptions of a reward that still count against its per-member limit. */
export async function countMemberRedemptions(tx: Sql, workspaceId: string, memberId: string, rewardId: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM reward_redemptions WHERE workspace_id = $1 AND member_id = $2 AND reward_id = $3 AND status NOT IN ('CANCELED', 'REFUNDED')`,
    [workspaceId, memberId, rewardId],
  );
  return rows[0]!.n;
}

export function publicRedemption(r: StoredRewardRedemption): RewardRedemption {
  const issued = r.issued && {
    ...(r.issued.voucherCode !== undefined ? { voucherCode: r.issued.voucherCode } : {}),
    ...(r.issued.amount !== undefined ? { amount: r.issued.amount } : {}),
    ...(r.issued.points !== undefined ? { points: r.issued.points } : {}),
    ...(r.issued.code !== undefined ? { code: r.issued.code } : {}),
  };
  return {
    id: r.id,
    memberId: r.memberId,
    rewardId: r.rewardId,
    points: r.points,
    status: r.status,
    ...(issued && Object.keys(issued).length ? { issued } : {}),
    createdAt: r.createdAt.toISOString(),
  };
}

export async function findRewardRedemption(db: Sql, workspaceId: string, id: string): Promise<StoredRewardRedemption | undefined> {
  const { rows } = await db.query<RedemptionRow>(`SELECT ${REDEMPTION_COLUMNS} FROM reward_redemptions WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return rows[0] && toStored(rows[0]);
}
